// face (generated)
export * from './alertRules.js';
export * from './dcgmExporter.js';
export * from './gpuMemorySettings.js';
export * from './grafanaDashboards.js';
export * from './karpenterDoNotDisrupt.js';
export * from './kedaScaledObject.js';
export * from './loadTest.js';
export * from './registry.js';
export * from './runPreflight.js';
export * from './scaleCycle.js';
export * from './serviceMonitorScraping.js';
export * from './vllmMetricsExposed.js';
export * from './warmup.js';
