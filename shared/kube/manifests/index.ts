// face (generated)
export * from './controlPlaneRbac.js';
export * from './k6Job.js';
export * from './k6LoadJob.js';
export * from './k6Script.js';
export * from './k6ScriptConfigMap.js';
export * from './k6WarmupJob.js';
export * from './labels.js';
export * from './parseInput.js';
export * from './vllmDeployment.js';
export * from './vllmInput.js';
export * from './vllmService.js';
export * from './vllmServiceMonitor.js';
export * from './warmup.js';
