// face (generated)
export * from './mapWithConcurrency.js';
export * from './stats.js';
