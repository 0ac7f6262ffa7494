// face (generated)
export * from './KubeClusterClient.js';
export * from './clientNodeConfiguration.js';
export * from './clientNodeRequest.js';
export * from './clusterConnections.js';
export * from './connectToEks.js';
export * from './eksToken.js';
export * from './toKubeError.js';
