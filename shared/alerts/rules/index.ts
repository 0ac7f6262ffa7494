// face (generated)
export * from './evaluate.js';
export * from './gpuMemoryCritical.js';
export * from './highLatency.js';
export * from './highQueueDepth.js';
export * from './kvCacheFull.js';
export * from './preemptionSpike.js';
export * from './registry.js';
export * from './scope.js';
export * from './settings.js';
export * from './text.js';
