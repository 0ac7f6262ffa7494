// face (generated)
export * from './collectMetrics.js';
export * from './errors.js';
export * from './toDatums.js';
export * from './types.js';
