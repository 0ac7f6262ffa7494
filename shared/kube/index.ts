// face (generated)
export * from './KubeClusterClient.js';
export * from './clientNodeConfiguration.js';
export * from './clientNodeRequest.js';
export * from './clusterConnections.js';
export * from './connectToEks.js';
export * from './eksToken.js';
export * from './errors.js';
export * from './jobs.js';
export * from './k6.js';
export * from './kinds.js';
export * from './resources.js';
export * from './toKubeError.js';
export * from './types.js';
export * from './updateWithRetry.js';
export * from './workload.js';
