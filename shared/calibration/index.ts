// face (generated)
export * from './analyze.js';
export * from './capacityEstimate.js';
export * from './chart.js';
export * from './earlyStop.js';
export * from './errors.js';
export * from './format.js';
export * from './input.js';
export * from './measure.js';
export * from './provenance.js';
export * from './report.js';
export * from './rules.js';
export * from './stepQueries.js';
export * from './strategyNames.js';
export * from './types.js';
