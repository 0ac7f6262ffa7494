import { KEDA_PRINTER_COLUMNS, type PrinterColumn } from '../kube/server/tables/table.js';
import type { KubeObject } from '../kube/types.js';

/**
 * The cluster add-ons the twin installs before the workload: what a platform team has on an EKS GPU cluster from
 * the AWS guide (NVIDIA's dcgm-exporter DaemonSet, the KEDA and Prometheus-operator CRDs). The product's own
 * manifests (the vLLM Deployment, Service, ServiceMonitor) come from shared/kube/manifests, as on a real cluster.
 */

/** Namespaces of the add-ons, as the guide's Helm charts create them. */
export const ADDON_NAMESPACES = { gpu: 'gpu-operator', keda: 'keda', monitoring: 'monitoring' } as const;

export function namespace(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

/** NVIDIA's dcgm-exporter DaemonSet (the gpu-operator's), on every GPU node. */
export function dcgmExporterDaemonSet(): KubeObject {
  const labels = { app: 'nvidia-dcgm-exporter', 'app.kubernetes.io/name': 'dcgm-exporter' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'nvidia-dcgm-exporter', namespace: ADDON_NAMESPACES.gpu, labels },
    spec: {
      selector: { matchLabels: { app: labels.app } },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { 'nvidia.com/gpu.present': 'true' },
          tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
          containers: [
            {
              name: 'nvidia-dcgm-exporter',
              image: 'nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2-4.8.2-ubuntu22.04',
              args: ['-f', '/etc/dcgm-exporter/default-counters.csv'],
              env: [{ name: 'DCGM_EXPORTER_KUBERNETES', value: 'true' }],
              ports: [{ name: 'metrics', containerPort: 9400 }],
            },
          ],
        },
      },
    },
  };
}

interface CrdNames {
  group: string;
  version: string;
  kind: string;
  plural: string;
  shortNames: string[];
  printerColumns?: readonly PrinterColumn[] | undefined;
}

/**
 * A CustomResourceDefinition as the operator's chart installs it, with the schema left open: the twin validates
 * custom resources with the models generated from the real CRDs (sim/kube/validation.ts), not with this object.
 */
export function customResourceDefinition(names: CrdNames): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${names.group}` },
    spec: {
      group: names.group,
      names: {
        kind: names.kind,
        listKind: `${names.kind}List`,
        plural: names.plural,
        singular: names.kind.toLowerCase(),
        shortNames: names.shortNames,
      },
      scope: 'Namespaced',
      versions: [
        {
          name: names.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          ...(names.printerColumns ? { additionalPrinterColumns: names.printerColumns } : {}),
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** KEDA's CRDs (the ones this product uses), with KEDA v2.20's printer columns. */
export function kedaCrds(): KubeObject[] {
  return [
    customResourceDefinition({
      group: 'keda.sh',
      version: 'v1alpha1',
      kind: 'ScaledObject',
      plural: 'scaledobjects',
      shortNames: ['so'],
      printerColumns: KEDA_PRINTER_COLUMNS.ScaledObject,
    }),
    customResourceDefinition({
      group: 'keda.sh',
      version: 'v1alpha1',
      kind: 'TriggerAuthentication',
      plural: 'triggerauthentications',
      shortNames: ['ta', 'triggerauth'],
      printerColumns: KEDA_PRINTER_COLUMNS.TriggerAuthentication,
    }),
  ];
}

/** The Prometheus operator's ServiceMonitor CRD (kube-prometheus-stack installs it). */
export function serviceMonitorCrd(): KubeObject {
  return customResourceDefinition({
    group: 'monitoring.coreos.com',
    version: 'v1',
    kind: 'ServiceMonitor',
    plural: 'servicemonitors',
    shortNames: ['smon'],
  });
}
