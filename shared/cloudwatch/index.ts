// face (generated)
export * from './CloudWatchMetricsSink.js';
export * from './errors.js';
export * from './limits.js';
export * from './planBatches.js';
export * from './types.js';
export * from './validate.js';
