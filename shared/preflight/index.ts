// face (generated)
export * from './calibrationMatch.js';
export * from './errors.js';
export * from './format.js';
export * from './settings.js';
export * from './types.js';
export * from './workload.js';
