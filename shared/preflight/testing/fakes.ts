/* eslint-disable @typescript-eslint/require-await -- the fakes answer at once, behind the ports' async signatures */
/**
 * In-memory fakes of the preflight ports for unit tests, and a fully prepared world (every check passes) that a
 * test breaks one thing at a time. Integration tests use the twin instead.
 */
import type { CalibrationHistoryStore, HistoryRecord } from '../../calibration/history/index.js';
import { podTemplateHash } from '../../calibration/index.js';
import { VirtualClock } from '../../clock/index.js';
import { ALERT_RULES } from '../../alerts/rules/index.js';
import { vllmDeployment, vllmService, vllmServiceMonitor } from '../../kube/manifests/index.js';
import type {
  ApplyResult,
  ClusterClient,
  KubeObject,
  LabelSelectorInput,
  ListRef,
  ObjectRef,
  PodProxyRef,
} from '../../kube/index.js';
import type {
  AlertRulesSource,
  InstantSample,
  MetricsSource,
  RangeSeries,
  RegisteredAlertRule,
} from '../../metrics/index.js';
import { DEFAULT_PREFLIGHT_SETTINGS } from '../settings.js';
import type { AmpRuleGroupsSource, EvaluatorHeartbeatSource, PreflightContext, PreflightTarget } from '../types.js';
import type { EvaluatorHeartbeat } from '../../alerts/heartbeat/index.js';

/** A read-only ClusterClient over a list of objects; `proxy` maps `<ns>/<pod><path>` to a body (or an Error). */
export class FakeCluster implements ClusterClient {
  constructor(
    public objects: KubeObject[],
    public proxy: Map<string, string | Error> = new Map(),
  ) {}

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    return this.objects.find(
      (o) =>
        o.apiVersion === ref.apiVersion &&
        o.kind === ref.kind &&
        o.metadata.name === ref.name &&
        (ref.namespace === undefined || o.metadata.namespace === ref.namespace),
    ) as T | undefined;
  }

  async list<T extends KubeObject = KubeObject>(ref: ListRef): Promise<T[]> {
    const selector = typeof ref.labelSelector === 'string' ? parseSelector(ref.labelSelector) : ref.labelSelector;
    return this.objects.filter(
      (o) =>
        o.apiVersion === ref.apiVersion &&
        o.kind === ref.kind &&
        (ref.namespace === undefined || o.metadata.namespace === ref.namespace) &&
        Object.entries(selector ?? {}).every(([k, v]) => o.metadata.labels?.[k] === v),
    ) as T[];
  }

  listPods(namespace: string, labelSelector?: LabelSelectorInput): Promise<KubeObject[]> {
    return this.list({ apiVersion: 'v1', kind: 'Pod', namespace, ...(labelSelector ? { labelSelector } : {}) });
  }

  async proxyGet(ref: PodProxyRef): Promise<string> {
    const answer = this.proxy.get(`${ref.namespace}/${ref.pod}${ref.path}`);
    if (answer === undefined) throw new Error(`no endpoint for pod ${ref.pod}:${ref.port}`);
    if (answer instanceof Error) throw answer;
    return answer;
  }

  apply<T extends KubeObject>(): Promise<ApplyResult<T>> {
    return readOnly();
  }
  patchMerge<T extends KubeObject = KubeObject>(): Promise<T> {
    return readOnly();
  }
  replace<T extends KubeObject>(): Promise<T> {
    return readOnly();
  }
  delete(): Promise<boolean> {
    return readOnly();
  }
  scale(): Promise<void> {
    return readOnly();
  }
  readPodLog(): Promise<string> {
    return readOnly();
  }
  updateWithRetry<T extends KubeObject = KubeObject>(): Promise<T> {
    return readOnly();
  }
}

function readOnly(): never {
  throw new Error('preflight checks never write');
}

function parseSelector(text: string): Record<string, string> {
  return Object.fromEntries(text.split(',').map((part) => part.split('=') as [string, string]));
}

/** Answers a query with the samples of the first rule whose pattern it contains or matches; none → empty. */
export class FakeMetrics implements MetricsSource {
  readonly queries: string[] = [];
  constructor(
    public instantRules: Array<{ match: RegExp; samples: InstantSample[] | Error }> = [],
    public rangeRules: Array<{ match: RegExp; series: RangeSeries[] }> = [],
  ) {}

  async instant(query: string): Promise<InstantSample[]> {
    this.queries.push(query);
    const rule = this.instantRules.find((r) => r.match.test(query));
    if (rule?.samples instanceof Error) throw rule.samples;
    return rule?.samples ?? [];
  }

  async range(query: string): Promise<RangeSeries[]> {
    this.queries.push(query);
    return this.rangeRules.find((r) => r.match.test(query))?.series ?? [];
  }
}

export class FakeRules implements AlertRulesSource {
  constructor(public rules: RegisteredAlertRule[] | Error = []) {}
  async alertingRules(): Promise<RegisteredAlertRule[]> {
    if (this.rules instanceof Error) throw this.rules;
    return this.rules;
  }
}

/** The evaluator heartbeat preflight reads: one fixed record (or none, or an error). */
export class FakeHeartbeat implements EvaluatorHeartbeatSource {
  constructor(public beat: EvaluatorHeartbeat | undefined | Error) {}
  async read(): Promise<EvaluatorHeartbeat | undefined> {
    if (this.beat instanceof Error) throw this.beat;
    return this.beat;
  }
}

/** A heartbeat of a healthy evaluator: its last cycle `ageMs` before NOW_MS, ok, one target. */
export function healthyHeartbeat(overrides: Partial<EvaluatorHeartbeat> = {}, ageMs = 5_000): EvaluatorHeartbeat {
  return {
    lastCycleAtMs: NOW_MS - ageMs,
    evaluationTimeMs: NOW_MS - ageMs - 1_000,
    intervalSeconds: 15,
    evaluatorId: 'req-1',
    targets: 1,
    ok: true,
    failedTargets: [],
    partialTargets: [],
    lastOkAtMs: NOW_MS - ageMs,
    ...overrides,
  };
}

/** AMP's rule groups namespaces: namespace → the data AMP holds. */
export class FakeAmpRuleGroups implements AmpRuleGroupsSource {
  readonly asked: string[] = [];
  constructor(public namespaces: Record<string, string> = {}) {}
  async describeRuleGroups(namespace: string): Promise<string | undefined> {
    this.asked.push(namespace);
    return this.namespaces[namespace];
  }
}

export class FakeHistory implements CalibrationHistoryStore {
  constructor(public records: HistoryRecord[] = []) {}
  async put(record: HistoryRecord): Promise<void> {
    this.records.unshift(record);
  }
  async latest(targetKey: string): Promise<HistoryRecord | undefined> {
    return this.records.find((r) => r.targetKey === targetKey);
  }
  async list(targetKey: string): Promise<HistoryRecord[]> {
    return this.records.filter((r) => r.targetKey === targetKey);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A prepared world

export const NOW_MS = Date.UTC(2025, 5, 2, 8, 0, 0);
export const TARGET: PreflightTarget = {
  name: 'demo',
  cluster: 'vllm-twin',
  namespace: 'default',
  deployment: 'vllm-inference-app',
  model: 'ministral',
};
export const PODS = ['vllm-inference-app-5d8f7c9b4-abcde', 'vllm-inference-app-5d8f7c9b4-fghij'] as const;
export const DEPLOYMENT_INPUT = { name: TARGET.deployment, model: TARGET.model, maxModelLen: 8192, replicas: 2 };

export function pod(name: string, ready = true): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: TARGET.namespace, labels: { app: TARGET.deployment } },
    spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

function crd(name: string): KubeObject {
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } };
}

export function dcgmDaemonSet(ready = 2, desired = 2): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'nvidia-dcgm-exporter', namespace: 'gpu-operator', labels: { app: 'nvidia-dcgm-exporter' } },
    spec: { template: { spec: { containers: [{ name: 'e', image: 'nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2' }] } } },
    status: { desiredNumberScheduled: desired, numberReady: ready },
  };
}

export function dashboardConfigMap(exprs: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'vllm-dashboards', namespace: 'monitoring', labels: { grafana_dashboard: '1' } },
    data: { 'vllm.json': JSON.stringify({ panels: exprs.map((expr) => ({ targets: [{ expr }] })) }) },
  };
}

/** A ScaledObject KEDA reports Ready (or not), with the given triggers (none by default). */
export function scaledObject(ready = 'True', triggers: unknown[] = []): KubeObject {
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name: 'vllm-scaler', namespace: TARGET.namespace },
    spec: { scaleTargetRef: { name: TARGET.deployment }, ...(triggers.length > 0 ? { triggers } : {}) },
    status: { conditions: [{ type: 'Ready', status: ready, message: ready === 'True' ? 'ok' : 'triggers failed' }] },
  };
}

/** A history record whose provenance describes `deployment` exactly. */
export function calibrationRecord(deployment: KubeObject): HistoryRecord {
  const template = (deployment.spec as { template: { spec: { containers: Array<{ image: string; args: string[] }> } } })
    .template;
  const container = template.spec.containers[0] as { image: string; args: string[] };
  return {
    targetKey: `${TARGET.cluster}/${TARGET.namespace}/${TARGET.deployment}`,
    finishedAt: '2025-06-01T08:00:00.000Z',
    executionName: 'calib-1',
    podTemplateHash: podTemplateHash(template),
    thresholds: null,
    previousThresholds: null,
    report: {
      version: 1,
      provenance: {
        executionId: 'arn:x',
        executionName: 'calib-1',
        startedAt: '2025-06-01T07:50:00.000Z',
        finishedAt: '2025-06-01T08:00:00.000Z',
        cluster: TARGET.cluster,
        namespace: TARGET.namespace,
        deployment: TARGET.deployment,
        model: TARGET.model,
        image: container.image,
        gpu: '1 × NVIDIA-L40S (g6e.4xlarge)',
        vllmArgs: [...container.args],
        podTemplateHash: podTemplateHash(template),
        strategy: 'linear',
        requestShape: { promptTokens: 35, maxTokens: 32 },
      },
      steps: [],
      analysis: {
        saturation: { found: true, rateRps: 40, stepIndex: 3, reasons: ['queue grows'] },
        lastStableRps: 30,
        capacityRps: null,
        thresholds: null,
        notes: [],
      },
      change: null,
    },
  };
}

const perPod = (value: (pod: string) => number): InstantSample[] =>
  PODS.map((p) => ({ labels: { pod: p, namespace: TARGET.namespace }, value: value(p), timestampMs: NOW_MS }));

/** Metric answers of a healthy target: series for both Pods, fresh scrapes, GPUs, 150 requests each, a scale cycle. */
export function healthyMetrics(): FakeMetrics {
  const t = (minutesAgo: number) => NOW_MS - minutesAgo * 60_000;
  return new FakeMetrics(
    [
      { match: /^timestamp\(vllm:num_requests_running/, samples: perPod(() => NOW_MS / 1000 - 5) },
      { match: /vllm:num_requests_running/, samples: perPod(() => 0) },
      {
        match: /DCGM_FI_DEV_FB_USED/,
        samples: PODS.map((p, i) => ({ labels: { pod: p, UUID: `GPU-${i}` }, value: 40_000, timestampMs: NOW_MS })),
      },
      { match: /vllm:request_success_total/, samples: perPod(() => 150) },
    ],
    [
      {
        match: /^count\(vllm:num_requests_running/,
        series: [
          {
            labels: {},
            points: [1, 1, 2, 3, 3, 2, 1].map((value, i) => ({ timestampMs: t(70 - i * 10), value })),
          },
        ],
      },
    ],
  );
}

export interface WorldOptions {
  deployment?: KubeObject;
  objects?: KubeObject[];
}

/** The objects of a fully prepared cluster (every check passes with healthyMetrics and a matching record). */
export function preparedObjects(deployment: KubeObject = vllmDeployment(DEPLOYMENT_INPUT)): KubeObject[] {
  return [
    deployment,
    vllmService(DEPLOYMENT_INPUT),
    vllmServiceMonitor(DEPLOYMENT_INPUT),
    crd('servicemonitors.monitoring.coreos.com'),
    crd('scaledobjects.keda.sh'),
    ...PODS.map((name) => pod(name)),
    dcgmDaemonSet(),
    dashboardConfigMap([
      'sum(vllm:num_requests_waiting)',
      'max(vllm:kv_cache_usage_perc)',
      'DCGM_FI_DEV_GPU_UTIL',
      'container_memory_working_set_bytes',
    ]),
    scaledObject(),
  ];
}

/** A context over the prepared world; each part may be replaced. */
export function preparedContext(parts: Partial<PreflightContext> & { objects?: KubeObject[] } = {}): PreflightContext {
  const objects = parts.objects ?? preparedObjects();
  const deployment = objects.find((o) => o.kind === 'Deployment') ?? vllmDeployment(DEPLOYMENT_INPUT);
  return {
    target: TARGET,
    cluster: new FakeCluster(objects),
    metrics: healthyMetrics(),
    rules: new FakeRules(ALERT_RULES.map((rule) => ({ group: 'vllm', name: rule.name, state: 'inactive' }))),
    alerting: { heartbeat: new FakeHeartbeat(healthyHeartbeat()) },
    history: new FakeHistory([calibrationRecord(deployment)]),
    settings: { ...DEFAULT_PREFLIGHT_SETTINGS, dashboardLabel: { ...DEFAULT_PREFLIGHT_SETTINGS.dashboardLabel } },
    clock: new VirtualClock(NOW_MS),
    ...withoutObjects(parts),
  };
}

function withoutObjects(parts: Partial<PreflightContext> & { objects?: KubeObject[] }): Partial<PreflightContext> {
  const { objects: _objects, ...rest } = parts;
  return rest;
}
