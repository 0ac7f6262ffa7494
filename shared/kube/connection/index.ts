/**
 * Connecting to a cluster: the @kubernetes/client-node adapter of the ClusterClient port, the EKS lookup and token,
 * one connection per cluster.
 */
export { KubeClusterClient } from './KubeClusterClient.js';
export { ClusterConnections, lazyClusterClient } from './clusterConnections.js';
export { connectToEks } from './connectToEks.js';
export { parseEksToken } from './eksToken.js';
export { toKubeError } from './toKubeError.js';
