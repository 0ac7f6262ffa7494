/**
 * The kinds the product reads and writes, as `{ apiVersion, kind }` pairs to spread into an ObjectRef or ListRef.
 * KEDA's kinds are in shared/keda.
 */
export const KINDS = {
  deployment: { apiVersion: 'apps/v1', kind: 'Deployment' },
  daemonSet: { apiVersion: 'apps/v1', kind: 'DaemonSet' },
  pod: { apiVersion: 'v1', kind: 'Pod' },
  service: { apiVersion: 'v1', kind: 'Service' },
  configMap: { apiVersion: 'v1', kind: 'ConfigMap' },
  node: { apiVersion: 'v1', kind: 'Node' },
  job: { apiVersion: 'batch/v1', kind: 'Job' },
  serviceMonitor: { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' },
  customResourceDefinition: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
} as const;
