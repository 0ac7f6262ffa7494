// face (generated)
export * from './errors.js';
export * from './jobs.js';
export * from './k6.js';
export * from './kinds.js';
export * from './resources.js';
export * from './types.js';
export * from './updateWithRetry.js';
export * from './workload.js';
