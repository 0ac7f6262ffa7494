import { systemClock } from '../../../shared/clock/index.js';
import { K6_ENV, K6_IMAGE } from '../../../shared/kube/index.js';
import type { TargetGroups } from '../../prometheus/scrapeConfig.js';
import { loadProfile } from '../../profile/loadProfile.js';
import type { Profile } from '../../profile/profile.js';
import { MemoryPodLogStore } from '../logs.js';
import { MemoryObjectStore } from '../store.js';
import type { KubeObject } from '../types.js';
import { startWorkloadControllers } from './startWorkloadControllers.js';
import type { ExternalService, ScrapeTargetSink, Workloads } from './types.js';

/**
 * Fixtures for the controllers' tests (unit and integration): a store with the usual namespaces, the controllers on
 * the demo profile with a short model load, and manifests shaped like the product's (shared/kube/manifests).
 */
export interface TestWorld {
  store: MemoryObjectStore;
  logs: MemoryPodLogStore;
  profile: Profile;
  workloads: Workloads;
  /** Every target set handed to the recorder (when no `prometheus` was given). */
  targets: TargetGroups[];
  /** The controllers' log. */
  lines: string[];
  stop(): Promise<void>;
}

export const TEST_MODEL = 'mistralai/Ministral-3-8B-Instruct-2512';

/**
 * Starts a store and the controllers; `modelLoadSeconds` defaults to 0.3 s so Pods get Ready quickly; `karpenter`
 * sets the profile's GPU NodePool limit (none by default, as in the built-in profiles).
 */
export async function startTestWorld(
  options: {
    modelLoadSeconds?: number;
    karpenter?: Profile['karpenter'];
    prometheus?: ScrapeTargetSink;
    namespaces?: string[];
    externalServices?: ExternalService[];
  } = {},
): Promise<TestWorld> {
  const base = await loadProfile('demo');
  const profile: Profile = {
    ...base,
    startup: { ...base.startup, modelLoadSeconds: options.modelLoadSeconds ?? 0.3 },
    ...(options.karpenter ? { karpenter: options.karpenter } : {}),
  };
  const store = new MemoryObjectStore();
  for (const name of options.namespaces ?? ['default', 'gpu-operator', 'monitoring'])
    store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const logs = new MemoryPodLogStore();
  const targets: TargetGroups[] = [];
  const lines: string[] = [];
  const workloads = startWorkloadControllers({
    store,
    logs,
    profile,
    clock: systemClock,
    prometheus: options.prometheus ?? {
      setTargets: (groups) => {
        targets.push(structuredClone(groups));
        return Promise.resolve();
      },
    },
    log: (line) => lines.push(line),
    resyncIntervalMs: 500,
    targetsDebounceMs: 100,
    readinessProbeIntervalMs: 100,
    ...(options.externalServices ? { externalServices: options.externalServices } : {}),
  });
  return { store, logs, profile, workloads, targets, lines, stop: () => workloads.stop() };
}

/** Polls `check` until it returns a value other than undefined/false; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? ` (last error: ${last.message})` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A vLLM Deployment as the product generates it (labels, args, GPU limit, toleration, /health probe). */
export function vllmDeployment(name: string, replicas: number, extraArgs: string[] = []): KubeObject {
  const labels = { app: name, 'app.kubernetes.io/name': 'vllm', 'app.kubernetes.io/instance': name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
        spec: {
          tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
          containers: [
            {
              name: 'vllm',
              image: 'vllm/vllm-openai:v0.11.0',
              args: [
                '--model',
                TEST_MODEL,
                '--served-model-name',
                TEST_MODEL,
                '--max-model-len',
                '4096',
                '--gpu-memory-utilization',
                '0.85',
                '--port',
                '8000',
                ...extraArgs,
              ],
              ports: [{ name: 'http', containerPort: 8000 }],
              resources: { limits: { 'nvidia.com/gpu': '1' } },
              readinessProbe: { httpGet: { path: '/health', port: 8000 }, periodSeconds: 5 },
            },
          ],
        },
      },
    },
  };
}

/** The vLLM Service (port `http` 8000) selecting `app: <app>`. */
export function vllmService(name: string, app: string, namespace = 'default'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { app } },
    spec: { selector: { app }, ports: [{ name: 'http', port: 8000, targetPort: 8000, protocol: 'TCP' }] },
  };
}

/** A ServiceMonitor selecting Services labelled `app: <app>` through port `http`. */
export function vllmServiceMonitor(
  name: string,
  app: string,
  extra: { namespace?: string; namespaceSelector?: Record<string, unknown>; port?: string } = {},
): KubeObject {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name, namespace: extra.namespace ?? 'default', labels: { release: 'kube-prometheus-stack' } },
    spec: {
      selector: { matchLabels: { app } },
      ...(extra.namespaceSelector ? { namespaceSelector: extra.namespaceSelector } : {}),
      endpoints: [{ port: extra.port ?? 'http', path: '/metrics', interval: '30s' }],
    },
  };
}

/** NVIDIA's dcgm-exporter DaemonSet (as the gpu-operator installs it), on GPU nodes. */
export function dcgmExporterDaemonSet(): KubeObject {
  const labels = { app: 'nvidia-dcgm-exporter' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'nvidia-dcgm-exporter', namespace: 'gpu-operator', labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { 'nvidia.com/gpu.present': 'true' },
          tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
          containers: [
            {
              name: 'nvidia-dcgm-exporter',
              image: 'nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2-4.8.2-ubuntu22.04',
              ports: [{ name: 'metrics', containerPort: 9400 }],
            },
          ],
        },
      },
    },
  };
}

/** A k6 Job as the product's k6LoadJob / k6WarmupJob make them (env per shared/kube/k6.ts, backoffLimit 0). */
export function k6Job(
  name: string,
  env: Partial<Record<keyof typeof K6_ENV, string>>,
  args = ['run', '/scripts/load.js'],
): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default', labels: { app: name } },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: { app: name } },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'k6',
              image: K6_IMAGE,
              args,
              env: Object.entries(env).map(([key, value]) => ({ name: K6_ENV[key as keyof typeof K6_ENV], value })),
            },
          ],
        },
      },
    },
  };
}

/** A field of a stored object's status (undefined when the object or the field is absent). */
export function statusOf(
  store: MemoryObjectStore,
  kind: 'Deployment' | 'ReplicaSet' | 'Job' | 'DaemonSet' | 'Pod',
  name: string,
  namespace = 'default',
): Record<string, unknown> {
  return (store.get(kind, namespace, name)?.status ?? {}) as Record<string, unknown>;
}

/** The Pods of a Deployment (by its `app` label), Ready or not. */
export function podsOf(store: MemoryObjectStore, app: string, namespace = 'default'): KubeObject[] {
  return store.list('Pod', { namespace, selector: { matchLabels: { app } } });
}
