import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ampRuleGroupsNamespaceData } from '../../alerts/export/index.js';
import type { EvaluatorHeartbeat } from '../../alerts/heartbeat/index.js';
import { ALERT_RULES, DEFAULT_ALERT_SETTINGS } from '../../alerts/rules/index.js';
import { grafanaDashboardConfigMaps } from '../../dashboards/index.js';
import { vllmDeployment } from '../../kube/manifests/index.js';
import type { KubeObject } from '../../kube/index.js';
import type { InstantSample, RangeSeries } from '../../metrics/index.js';
import { CADVISOR, DCGM, VLLM_RENAMED } from '../../metrics/index.js';
import {
  DEPLOYMENT_INPUT,
  FakeCluster,
  FakeHistory,
  FakeMetrics,
  FakeAmpRuleGroups,
  FakeHeartbeat,
  PODS,
  TARGET,
  calibrationRecord,
  dashboardConfigMap,
  dcgmDaemonSet,
  healthyHeartbeat,
  healthyMetrics,
  pod,
  preparedContext,
  preparedObjects,
  scaledObject,
} from '../testing/fakes.js';
import type { PreflightCheck, PreflightContext } from '../types.js';
import { alertRules } from './alertRules.js';
import { dcgmExporter } from './dcgmExporter.js';
import { gpuMemorySettings } from './gpuMemorySettings.js';
import { DASHBOARD_TIERS, grafanaDashboards } from './grafanaDashboards.js';
import { karpenterDoNotDisrupt } from './karpenterDoNotDisrupt.js';
import { kedaScaledObject } from './kedaScaledObject.js';
import { scaledObject as productScaledObject } from '../../keda/index.js';
import { loadTest } from './loadTest.js';
import { PREFLIGHT_CHECKS } from './registry.js';
import { findScaleCycle, scaleCycle } from './scaleCycle.js';
import { serviceMonitorScraping } from './serviceMonitorScraping.js';
import { vllmMetricsExposed } from './vllmMetricsExposed.js';
import { warmup } from './warmup.js';

const without = (objects: KubeObject[], kind: string, name?: string) =>
  objects.filter((o) => !(o.kind === kind && (name === undefined || o.metadata.name === name)));
const replace = (objects: KubeObject[], kind: string, next: KubeObject) => [...without(objects, kind), next];
const deploymentWith = (input: Record<string, unknown>) => vllmDeployment({ ...DEPLOYMENT_INPUT, ...input });
const withMetrics = (drop: RegExp): FakeMetrics => {
  const metrics = healthyMetrics();
  metrics.instantRules = metrics.instantRules.map((r) => (drop.test(r.match.source) ? { ...r, samples: [] } : r));
  return metrics;
};
const VLLM_EXPOSITION =
  '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="ministral"} 0\nvllm:request_success_total{finished_reason="stop"} 120\n';

/** Runs one check against a context built from the prepared world with the given changes. */
async function run(check: PreflightCheck, context: PreflightContext) {
  return check.run(context);
}

describe('Preflight checks on a fully prepared deployment', () => {
  it.each([...PREFLIGHT_CHECKS])('$item $id passes with a reason and evidence and no fix', async (check) => {
    // Act
    const result = await run(check, preparedContext());

    // Assess
    expect({ status: result.status, reason: result.reason }).toEqual({ status: 'pass', reason: expect.any(String) });
    expect(result.evidence.length).toBeGreaterThan(0);
    expect(result.fix).toBeUndefined();
  });
});

describe('Check: vllm-metrics-exposed', () => {
  it('passes through the Pod proxy when AMP has no series (no ServiceMonitor is not its problem)', async () => {
    // Prepare
    const objects = without(preparedObjects(), 'ServiceMonitor');
    const cluster = new FakeCluster(objects, new Map(PODS.map((p) => [`default/${p}/metrics`, VLLM_EXPOSITION])));
    const context = preparedContext({ objects, cluster, metrics: withMetrics(/num_requests_running/) });

    // Act
    const result = await run(vllmMetricsExposed, context);

    // Assess
    expect(result.status).toBe('pass');
    expect(result.reason).toBe(
      'all 2 Ready Pods serve vLLM metrics: 0 seen in AMP, 2 read on /metrics through the Pod proxy',
    );
  });

  it.each([
    {
      case: 'a Pod whose /metrics has no vLLM series',
      proxy: new Map<string, string | Error>([
        [`default/${PODS[0]}/metrics`, VLLM_EXPOSITION],
        [`default/${PODS[1]}/metrics`, 'up 1\n'],
      ]),
      pods: undefined,
      reason: `1 Ready Pod of 2 serve no vLLM metrics on /metrics (port 8000): ${PODS[1]}`,
    },
    {
      case: 'no Ready Pods',
      proxy: new Map<string, string | Error>(),
      pods: [pod(PODS[0], false)],
      reason: 'Deployment default/vllm-inference-app has no Ready Pods, so no vLLM /metrics endpoint serves',
    },
  ])('fails with $case', async ({ proxy, pods, reason }) => {
    // Prepare
    const base = preparedObjects();
    const objects = pods === undefined ? base : [...without(base, 'Pod'), ...pods];
    const context = preparedContext({
      objects,
      cluster: new FakeCluster(objects, proxy),
      metrics: withMetrics(/num_requests_running/),
    });

    // Act
    const result = await run(vllmMetricsExposed, context);

    // Assess
    expect({ status: result.status, reason: result.reason }).toEqual({ status: 'fail', reason });
    expect(result.fix).toEqual(expect.any(String));
  });
});

describe('Check: service-monitor-scraping', () => {
  it.each([
    {
      case: 'the Prometheus operator CRD is missing',
      objects: () => without(preparedObjects(), 'CustomResourceDefinition', 'servicemonitors.monitoring.coreos.com'),
      metrics: healthyMetrics,
      reason: /^Prometheus operator not installed/,
    },
    {
      case: 'no ServiceMonitor',
      objects: () => without(preparedObjects(), 'ServiceMonitor'),
      metrics: healthyMetrics,
      reason: /^no ServiceMonitor \(of 0 ones watching namespace default\) selects Service vllm-inference-svc/,
    },
    {
      case: 'a ServiceMonitor on a port the Service does not have',
      objects: () => {
        const objects = preparedObjects();
        const monitor = structuredClone(objects.find((o) => o.kind === 'ServiceMonitor') as KubeObject);
        (monitor.spec as { endpoints: Array<{ port: string }> }).endpoints = [{ port: 'metrics' }];
        return replace(objects, 'ServiceMonitor', monitor);
      },
      metrics: healthyMetrics,
      reason: /selects Service vllm-inference-svc but names none of its ports \("http"\)/,
    },
    {
      case: 'no samples in AMP',
      objects: preparedObjects,
      metrics: () => withMetrics(/timestamp/),
      reason: new RegExp(`but no samples in AMP for ${PODS[0]} and ${PODS[1]} \\(fresh means under 120 s\\)`),
    },
    {
      case: 'stale samples',
      objects: preparedObjects,
      metrics: () => {
        const metrics = healthyMetrics();
        const rule = metrics.instantRules[0];
        if (rule && !(rule.samples instanceof Error))
          rule.samples = rule.samples.map((s) => ({ ...s, value: s.value - 600 }));
        return metrics;
      },
      reason: /stale samples for .* \(605 s old\)/,
    },
  ])('fails when $case', async ({ objects, metrics, reason }) => {
    // Act
    const result = await run(serviceMonitorScraping, preparedContext({ objects: objects(), metrics: metrics() }));

    // Assess
    expect(result.status).toBe('fail');
    expect(result.reason).toMatch(reason);
    expect(result.fix).toEqual(expect.any(String));
  });
});

describe('Check: dcgm-exporter', () => {
  it.each([
    {
      case: 'no DCGM exporter DaemonSet',
      objects: () => without(preparedObjects(), 'DaemonSet'),
      metrics: healthyMetrics,
      reason: /^no DCGM exporter DaemonSet in any namespace/,
    },
    {
      case: 'the DaemonSet not Ready everywhere',
      objects: () => replace(preparedObjects(), 'DaemonSet', dcgmDaemonSet(1, 2)),
      metrics: healthyMetrics,
      reason: /^DCGM exporter DaemonSet not running on every GPU node: gpu-operator\/nvidia-dcgm-exporter 1\/2 Ready/,
    },
    {
      case: 'no framebuffer series for the GPUs',
      objects: preparedObjects,
      metrics: () => withMetrics(/DCGM/),
      reason: /AMP has no DCGM_FI_DEV_FB_USED series for the GPU of/,
    },
  ])('fails with $case', async ({ objects, metrics, reason }) => {
    // Act
    const result = await run(dcgmExporter, preparedContext({ objects: objects(), metrics: metrics() }));

    // Assess
    expect(result.status).toBe('fail');
    expect(result.reason).toMatch(reason);
  });
});

describe('Check: grafana-dashboards', () => {
  it.each([
    {
      case: 'no labelled ConfigMap',
      objects: () => without(preparedObjects(), 'ConfigMap'),
      reason: /^no ConfigMap in any namespace has the Grafana sidecar label grafana_dashboard=1/,
    },
    {
      case: 'a dashboard of service quality only',
      objects: () => replace(preparedObjects(), 'ConfigMap', dashboardConfigMap(['vllm:num_requests_running'])),
      reason: /no panel queries Tier 2 \(vLLM engine state\) and Tier 3 \(GPU and infrastructure\)$/,
    },
    {
      case: "vLLM and GPU panels but none of the guide's engine-state series",
      objects: () =>
        replace(
          preparedObjects(),
          'ConfigMap',
          dashboardConfigMap(['sum(vllm:num_requests_waiting)', 'DCGM_FI_DEV_GPU_UTIL', 'vllm:cache_config_info']),
        ),
      reason: /no panel queries Tier 2 \(vLLM engine state\)$/,
    },
    {
      case: "series that only share a prefix with the guide's",
      objects: () =>
        replace(
          preparedObjects(),
          'ConfigMap',
          dashboardConfigMap([
            'vllm:num_requests_waiting_by_reason',
            'vllm:request_time_per_output_token_seconds_bucket',
            'vllm:prompt_tokens_cached_total',
          ]),
        ),
      reason:
        /no panel queries Tier 1 \(service quality\), Tier 2 \(vLLM engine state\) and Tier 3 \(GPU and infrastructure\)$/,
    },
  ])('warns with $case', async ({ objects, reason }) => {
    // Act
    const result = await run(grafanaDashboards, preparedContext({ objects: objects() }));

    // Assess
    expect(result.status).toBe('warn');
    expect(result.reason).toMatch(reason);
    expect(result.fix).toEqual(expect.any(String));
  });

  it.each([
    {
      case: "vLLM's current names",
      exprs: [
        'histogram_quantile(0.95, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket[5m])))',
        'max(vllm:kv_cache_usage_perc)',
        'DCGM_FI_DEV_FB_USED',
      ],
    },
    {
      case: "vLLM's names before 0.11",
      exprs: [
        'histogram_quantile(0.95, sum by (le) (rate(vllm:time_per_output_token_seconds_bucket[5m])))',
        'max(vllm:gpu_cache_usage_perc)',
        'sum(rate(container_cpu_usage_seconds_total[5m]))',
      ],
    },
    {
      case: 'counters and histogram series',
      exprs: [
        'sum(rate(vllm:request_success_total[5m]))',
        'sum(rate(vllm:iteration_tokens_total_sum[5m])) / sum(rate(vllm:iteration_tokens_total_count[5m]))',
        'container_memory_working_set_bytes',
      ],
    },
  ])('passes with the three tiers queried under $case', async ({ exprs }) => {
    // Prepare
    const objects = replace(preparedObjects(), 'ConfigMap', dashboardConfigMap(exprs));

    // Act
    const result = await run(grafanaDashboards, preparedContext({ objects }));

    // Assess
    expect({ status: result.status, reason: result.reason }).toEqual({
      status: 'pass',
      reason:
        '1 dashboard in 1 ConfigMap labelled grafana_dashboard=1 query all three tiers (service quality, vLLM engine state, GPU and infrastructure)',
    });
  });

  it("passes with the repository's dashboards (infra/grafana), each covering its own tier", async () => {
    // Prepare
    const objects = [...without(preparedObjects(), 'ConfigMap'), ...grafanaDashboardConfigMaps()];

    // Act
    const result = await run(grafanaDashboards, preparedContext({ objects }));

    // Assess
    expect(result.status).toBe('pass');
    expect(result.evidence.map((e) => (e.kind === 'object' ? e.detail?.tiers : undefined))).toEqual([[1], [2], [3]]);
  });

  it('puts both names of the renamed KV-cache and inter-token series, every DCGM field and cAdvisor series in one tier', () => {
    // Prepare
    const names = [
      ...[VLLM_RENAMED.kvCacheUsage, VLLM_RENAMED.interTokenLatency].flatMap((m) => [m.current, m.legacy]),
      ...Object.values(DCGM),
      ...Object.values(CADVISOR),
    ];

    // Act
    const tiers = names.map((name) => DASHBOARD_TIERS.filter((t) => t.pattern.test(`sum(${name})`)).length);

    // Assess
    expect(tiers).toEqual(names.map(() => 1));
  });
});

describe('Check: alert-rules', () => {
  const NOW = preparedContext().clock.now();
  const heartbeatContext = (beat: EvaluatorHeartbeat | undefined) =>
    preparedContext({ alerting: { heartbeat: new FakeHeartbeat(beat) } });

  describe('Lambda engine: the evaluator heartbeat', () => {
    it.each([
      {
        case: 'a heartbeat 5 s old from an ok cycle passes',
        beat: healthyHeartbeat(),
        status: 'pass',
        reason:
          /^the alert evaluator runs the \d+ rules every 15 s: its last cycle at .*, 5 s ago \(within 30 s\) evaluated all 1 target/,
      },
      {
        // The evaluator never ran: a fresh stack whose schedule is off, or a function that fails on start.
        case: 'no heartbeat ever fails',
        beat: undefined,
        status: 'fail',
        reason: /^the alert evaluator has never recorded a heartbeat: no evaluation cycle has run/,
      },
      {
        // Two intervals (30 s) is the limit: 31 s means at least one cycle is missing.
        case: 'a heartbeat older than two intervals fails with when and how long ago',
        beat: healthyHeartbeat({}, 31_000),
        status: 'fail',
        reason: new RegExp(
          `^the alert evaluator has stopped: its last cycle at ${new Date(NOW - 31_000).toISOString()}, 31 s ago \\(more than 2 evaluation intervals, 30 s\\)$`,
        ),
      },
      {
        case: 'a fresh heartbeat of a failed cycle fails naming the targets and their reasons',
        beat: healthyHeartbeat({
          ok: false,
          targets: 2,
          failedTargets: [
            { target: 'prod-ministral', reason: 'VLLMHighQueueDepth: AlertQueryFailedError: AMP answered HTTP 403' },
          ],
          lastOkAtMs: NOW - 600_000,
        }),
        status: 'fail',
        reason: new RegExp(
          '^the alert evaluator runs, but its last cycle at .*, 5 s ago, failed for target prod-ministral ' +
            '\\(VLLMHighQueueDepth: AlertQueryFailedError: AMP answered HTTP 403\\); the last successful cycle was at ' +
            new Date(NOW - 600_000).toISOString(),
        ),
      },
      {
        case: 'an ok cycle that evaluated this target in part warns with the rule that failed',
        beat: healthyHeartbeat({
          partialTargets: [{ target: TARGET.name, reason: 'VLLMHighLatency: Error: timeout' }],
        }),
        status: 'warn',
        reason: /evaluated this target only in part: VLLMHighLatency: Error: timeout$/,
      },
    ])('$case', async ({ beat, status, reason }) => {
      // Act
      const result = await run(alertRules, heartbeatContext(beat));

      // Assess
      expect(result.status).toBe(status);
      expect(result.reason).toMatch(reason);
      expect(result.evidence).toContainEqual(
        expect.objectContaining({ kind: 'record', key: 'evaluator heartbeat', found: beat !== undefined }),
      );
      if (status !== 'pass') expect(result.fix).toMatch(/alert-evaluator function/);
    });

    it('does not pass on a setting: without the heartbeat port it fails, naming what is missing', async () => {
      // Act
      const result = await run(alertRules, preparedContext({ alerting: {} }));

      // Assess
      expect(result.status).toBe('fail');
      expect(result.reason).toMatch(/no access to the evaluator's heartbeat/);
    });
  });

  describe('AMP engine: the rule groups namespace', () => {
    const NAMESPACE = 'vllm-eks-pilot-prod';
    /** The namespace data the AMP engine installs for the target (the generated rules). */
    const installed = () =>
      ampRuleGroupsNamespaceData({ targets: [{ target: TARGET, settings: DEFAULT_ALERT_SETTINGS }] });
    const ampContext = (namespaces: Record<string, string>) => {
      const context = preparedContext({ alerting: { ampRuleGroups: new FakeAmpRuleGroups(namespaces) } });
      context.settings.alertingEngine = 'amp';
      context.settings.ampRuleNamespace = NAMESPACE;
      return context;
    };

    it('passes when the namespace holds the generated rules of the target, unchanged', async () => {
      // Act
      const result = await run(alertRules, ampContext({ [NAMESPACE]: installed() }));

      // Assess
      expect(result.status).toBe('pass');
      expect(result.reason).toMatch(
        new RegExp(
          `^AMP's ruler holds the ${ALERT_RULES.length} generated rules for this target .* in ${NAMESPACE}, unchanged$`,
        ),
      );
    });

    it.each([
      {
        case: 'no namespace at all',
        data: undefined,
        reason: `the AMP rule groups namespace ${NAMESPACE} does not exist: AMP's ruler evaluates none of the rules`,
      },
      {
        // Someone edited a threshold in AMP by hand, and removed a rule.
        case: 'a changed threshold and a removed rule',
        data: (() => {
          const file = parseYaml(installed()) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
          const group = file.groups[0];
          if (group !== undefined)
            group.rules = group.rules
              .filter((r) => r.alert !== 'VLLMHighQueueDepth')
              .map((r) => (r.alert === 'VLLMKVCacheFull' ? { ...r, expr: r.expr.replace('> 0.95', '> 0.99') } : r));
          return stringifyYaml(file);
        })(),
        reason:
          /^AMP's rules for this target differ from the generated ones \(group vllm-eks-pilot-alerts-\S+ in vllm-eks-pilot-prod\): VLLMHighQueueDepth is missing; VLLMKVCacheFull differs in expr/,
      },
      {
        case: "another target's group only",
        data: installed().replaceAll(`vllm-eks-pilot-alerts-${TARGET.name}`, 'vllm-eks-pilot-alerts-other'),
        reason: `the AMP rule groups namespace ${NAMESPACE} has no group vllm-eks-pilot-alerts-${TARGET.name} for this target`,
      },
    ])('fails with $case, saying what differs', async ({ data, reason }) => {
      // Act
      const result = await run(alertRules, ampContext(data === undefined ? {} : { [NAMESPACE]: data }));

      // Assess
      expect(result.status).toBe('fail');
      if (typeof reason === 'string') expect(result.reason).toBe(reason);
      else expect(result.reason).toMatch(reason);
      expect(result.fix).toMatch(/alert-installer/);
    });
  });
});

describe('Check: keda-scaled-object', () => {
  it.each([
    {
      case: 'KEDA not installed',
      objects: () => without(preparedObjects(), 'CustomResourceDefinition', 'scaledobjects.keda.sh'),
      reason: /^KEDA not installed/,
    },
    {
      case: 'no ScaledObject',
      objects: () => without(preparedObjects(), 'ScaledObject'),
      reason: /^no ScaledObject in namespace default targets Deployment vllm-inference-app/,
    },
    {
      case: 'a ScaledObject that is not Ready',
      objects: () => replace(preparedObjects(), 'ScaledObject', scaledObject('False')),
      reason: /^ScaledObject not Ready: vllm-scaler Ready=False \(triggers failed\)/,
    },
  ])('fails with $case', async ({ objects, reason }) => {
    // Act
    const result = await run(kedaScaledObject, preparedContext({ objects: objects() }));

    // Assess
    expect(result.status).toBe('fail');
    expect(result.reason).toMatch(reason);
  });

  /** The product's two triggers, the latency one with `metricType` (absent: KEDA's AverageValue). */
  function triggers(latencyMetricType?: string): unknown[] {
    const triggerList = (
      productScaledObject({ model: 'm', ampWorkspaceUrl: 'http://127.0.0.1:9090', authentication: false }).spec as {
        triggers: Array<Record<string, unknown>>;
      }
    ).triggers;
    const [queue, latency] = triggerList;
    const { metricType: _type, ...untyped } = latency ?? {};
    return [queue, latencyMetricType === undefined ? untyped : { ...untyped, metricType: latencyMetricType }];
  }

  it('passes a Ready ScaledObject whose p95 trigger is compared as a whole (metricType Value)', async () => {
    // Act
    const objects = replace(preparedObjects(), 'ScaledObject', scaledObject('True', triggers('Value')));
    const result = await run(kedaScaledObject, preparedContext({ objects }));

    // Assess
    expect(result).toMatchObject({ status: 'pass', reason: expect.stringMatching(/and is Ready$/) });
  });

  it.each([
    { case: "the guide's AverageValue", metricType: 'AverageValue', shown: 'AverageValue' },
    { case: 'no metricType (KEDA reads AverageValue)', metricType: undefined, shown: 'AverageValue (the default)' },
  ])(
    'warns when the p95 trigger is read per Pod: $case, naming the trigger, why and the fix',
    async ({ metricType, shown }) => {
      // Act
      const objects = replace(preparedObjects(), 'ScaledObject', scaledObject('True', triggers(metricType)));
      const result = await run(kedaScaledObject, preparedContext({ objects }));

      // Assess
      expect(result.status).toBe('warn');
      expect(result.reason).toContain(`p95-latency trigger (spec.triggers[1]) has metricType ${shown}`);
      expect(result.reason).toContain('asks for ceil(p95 / 5 s) Pods however many run');
      expect(result.fix).toMatch(/^Set metricType: Value on that trigger/);
    },
  );
});

describe('Check: karpenter-do-not-disrupt', () => {
  it('warns when the Pod template lacks the annotation', async () => {
    // Prepare
    const deployment = structuredClone(vllmDeployment(DEPLOYMENT_INPUT));
    const meta = (deployment.spec as { template: { metadata: { annotations: Record<string, string> } } }).template
      .metadata;
    delete meta.annotations['karpenter.sh/do-not-disrupt'];

    // Act
    const result = await run(
      karpenterDoNotDisrupt,
      preparedContext({ objects: replace(preparedObjects(), 'Deployment', deployment) }),
    );

    // Assess
    expect(result.status).toBe('warn');
    expect(result.reason).toBe(
      'the Pod template has no karpenter.sh/do-not-disrupt annotation: Karpenter consolidation may evict a serving replica',
    );
  });
});

describe('Check: load-test', () => {
  it('passes when only the memory flags changed since the calibration, naming them', async () => {
    // Prepare
    const measured = vllmDeployment(DEPLOYMENT_INPUT);
    const live = deploymentWith({ gpuMemoryUtilization: 0.95 });
    const context = preparedContext({
      objects: replace(preparedObjects(), 'Deployment', live),
      history: new FakeHistory([calibrationRecord(measured)]),
    });

    // Act
    const result = await run(loadTest, context);

    // Assess
    expect(result.status).toBe('pass');
    expect(result.reason).toMatch(/same image, model, GPU and vLLM args .*--gpu-memory-utilization: 0.85 → 0.95/);
  });

  it.each([
    {
      case: 'no record',
      history: () => new FakeHistory([]),
      reason: /^no calibration record for vllm-twin\/default\/vllm-inference-app/,
    },
    {
      case: 'a record of another image',
      history: () => new FakeHistory([calibrationRecord(deploymentWith({ image: 'vllm/vllm-openai:v0.9.2' }))]),
      reason:
        /^stale: calibration calib-1 of .* measured a different spec: image: vllm\/vllm-openai:v0.9.2 → vllm\/vllm-openai:v0.11.0/,
    },
    {
      case: 'a record with other args',
      history: () => new FakeHistory([calibrationRecord(deploymentWith({ maxNumSeqs: 64 }))]),
      reason: /^stale: .*--max-num-seqs: 64 → \(unset\)/,
    },
  ])('warns with $case', async ({ history, reason }) => {
    // Act
    const result = await run(loadTest, preparedContext({ history: history() }));

    // Assess
    expect(result.status).toBe('warn');
    expect(result.reason).toMatch(reason);
  });
});

describe('Check: warmup', () => {
  it.each([
    {
      case: 'the template does not automate warmup',
      objects: () => replace(preparedObjects(), 'Deployment', deploymentWith({ warmup: false })),
      metrics: healthyMetrics,
      reason: /^the Pod template does not automate warmup/,
    },
    {
      case: 'a Pod served fewer requests than the warmup',
      objects: preparedObjects,
      metrics: () => {
        const metrics = healthyMetrics();
        const rule = metrics.instantRules.find((r) => r.match.source.includes('request_success'));
        if (rule && !(rule.samples instanceof Error))
          rule.samples = rule.samples.map((s, i) => ({ ...s, value: i === 0 ? 40 : 150 }));
        return metrics;
      },
      reason: new RegExp(`served fewer than 100 requests: ${PODS[0]} \\(40\\)$`),
    },
  ])('warns when $case', async ({ objects, metrics, reason }) => {
    // Act
    const result = await run(warmup, preparedContext({ objects: objects(), metrics: metrics() }));

    // Assess
    expect(result.status).toBe('warn');
    expect(result.reason).toMatch(reason);
  });

  it('reads the request count through the Pod proxy when AMP has none', async () => {
    // Prepare
    const objects = preparedObjects();
    const cluster = new FakeCluster(objects, new Map(PODS.map((p) => [`default/${p}/metrics`, VLLM_EXPOSITION])));

    // Act
    const result = await run(warmup, preparedContext({ objects, cluster, metrics: withMetrics(/request_success/) }));

    // Assess
    expect(result.status).toBe('pass');
    expect(result.reason).toMatch(/served at least 100 requests \(fewest 120\)$/);
  });
});

describe('Check: gpu-memory-settings', () => {
  it.each([
    {
      case: '--gpu-memory-utilization above 0.9',
      input: { gpuMemoryUtilization: 0.95 },
      status: 'warn',
      reason:
        /--gpu-memory-utilization 0.95 is above 0.9 \(OOM risk; the guide recommends 0.85\); differs from calibration calib-1: --gpu-memory-utilization: 0.85 → 0.95 \(recalibrate\)/,
    },
    {
      case: '--max-model-len missing',
      input: { extraArgs: [] },
      status: 'fail',
      reason: /^--max-model-len is not set: vLLM reserves KV cache for the model's maximum context/,
      dropMaxModelLen: true,
    },
  ])('$status with $case', async ({ input, status, reason, dropMaxModelLen }) => {
    // Prepare
    const live = structuredClone(deploymentWith(input));
    if (dropMaxModelLen === true) {
      const container = (live.spec as { template: { spec: { containers: Array<{ args: string[] }> } } }).template.spec
        .containers[0] as { args: string[] };
      const at = container.args.indexOf('--max-model-len');
      container.args.splice(at, 2);
    }
    const context = preparedContext({
      objects: replace(preparedObjects(), 'Deployment', live),
      history: new FakeHistory([calibrationRecord(vllmDeployment(DEPLOYMENT_INPUT))]),
    });

    // Act
    const result = await run(gpuMemorySettings, context);

    // Assess
    expect(result.status).toBe(status);
    expect(result.reason).toMatch(reason);
  });

  it("passes with a note when --gpu-memory-utilization is left at vLLM's default", async () => {
    // Prepare
    const live = structuredClone(vllmDeployment(DEPLOYMENT_INPUT));
    const container = (live.spec as { template: { spec: { containers: Array<{ args: string[] }> } } }).template.spec
      .containers[0] as { args: string[] };
    container.args.splice(container.args.indexOf('--gpu-memory-utilization'), 2);

    // Act
    const result = await run(
      gpuMemorySettings,
      preparedContext({ objects: replace(preparedObjects(), 'Deployment', live), history: new FakeHistory() }),
    );

    // Assess
    expect(result.status).toBe('pass');
    expect(result.reason).toBe(
      "--max-model-len 8192; --gpu-memory-utilization not set (vLLM's default 0.9; the guide recommends 0.85)",
    );
  });
});

describe('Check: scale-cycle', () => {
  it.each([
    {
      case: 'no series',
      points: [] as number[],
      reason: /^no serving Pods of vllm-inference-app in AMP over the last 7 d/,
    },
    {
      case: 'a constant count',
      points: [2, 2, 2],
      reason: /^no scale-out followed by a scale-in in the last 7 d \(serving Pods between 2 and 2\)/,
    },
    { case: 'a scale-out only', points: [1, 2, 3], reason: /between 1 and 3/ },
  ])('warns with $case', async ({ points, reason }) => {
    // Prepare
    const metrics = new FakeMetrics(
      [],
      [
        {
          match: /^count/,
          series:
            points.length === 0
              ? []
              : [{ labels: {}, points: points.map((value, i) => ({ timestampMs: i * 60_000, value })) }],
        },
      ],
    );

    // Act
    const result = await run(scaleCycle, preparedContext({ metrics }));

    // Assess
    expect(result.status).toBe('warn');
    expect(result.reason).toMatch(reason);
  });

  it('names the times and counts of the cycle it found', async () => {
    // Act
    const result = await run(scaleCycle, preparedContext());

    // Assess
    expect(result.reason).toBe(
      'scaled out from 1 to 3 serving Pods at 2025-06-02T07:20:00.000Z and back in to 1 at 2025-06-02T07:50:00.000Z',
    );
  });
});

describe('Function: findScaleCycle', () => {
  it.each([
    { case: 'down then up then down', values: [3, 1, 2, 1], expected: { before: 1, out: 2, in: 1 } },
    { case: 'only down', values: [3, 2, 1], expected: undefined },
    { case: 'a plateau before the fall', values: [1, 2, 2, 2, 1], expected: { before: 1, out: 2, in: 1 } },
    { case: 'only up', values: [1, 2, 3], expected: undefined },
    {
      case: 'a rollout blip, then a real scale cycle: the larger one',
      values: [1, 2, 1, 1, 2, 3, 4, 4, 3, 2, 1],
      expected: { before: 1, out: 4, in: 1 },
    },
  ])('$case', ({ values, expected }) => {
    // Act
    const cycle = findScaleCycle(values.map((value, i) => ({ timestampMs: i, value })));

    // Assess
    expect(
      cycle === undefined ? undefined : { before: cycle.before.value, out: cycle.out.value, in: cycle.in.value },
    ).toEqual(expected);
  });
});

describe('AMP answers the shared guard refuses', () => {
  /** Healthy answers with the instant rule whose pattern is `source` changed by `change`. */
  const instantChanged = (source: string, change: (samples: InstantSample[]) => InstantSample[]) => {
    const metrics = healthyMetrics();
    const rule = metrics.instantRules.find((r) => r.match.source === source);
    if (rule === undefined || rule.samples instanceof Error) throw new Error(`no instant rule ${source}`);
    rule.samples = change(rule.samples);
    return metrics;
  };
  const rangeChanged = (change: (series: RangeSeries[]) => RangeSeries[]) => {
    const metrics = healthyMetrics();
    const rule = metrics.rangeRules[0] as { match: RegExp; series: RangeSeries[] };
    rule.series = change(rule.series);
    return metrics;
  };
  /** The first sample twice, told apart by `instance`: two series for one Pod. */
  const twiceForOnePod = (samples: InstantSample[]) => {
    const [first, ...rest] = samples as [InstantSample, ...InstantSample[]];
    return [
      { ...first, labels: { ...first.labels, instance: '10.0.0.1:8000' } },
      { ...first, labels: { ...first.labels, instance: '10.0.0.2:8000' } },
      ...rest,
    ];
  };
  const firstValue = (value: number) => (samples: InstantSample[]) =>
    samples.map((sample, i) => (i === 0 ? { ...sample, value } : sample));
  const bothNamed = new RegExp(
    `expected one series per pod, got 2 series: \\{"pod":"${PODS[0]}","namespace":"default","instance":"10.0.0.1:8000"\\}, ` +
      `\\{"pod":"${PODS[0]}","namespace":"default","instance":"10.0.0.2:8000"\\}`,
  );

  it.each([
    {
      case: 'vllm-metrics-exposed: two series for one Pod',
      check: vllmMetricsExposed,
      metrics: () => instantChanged('vllm:num_requests_running', twiceForOnePod),
      error: 'MetricsMultipleSeriesError',
      reason: bothNamed,
    },
    {
      case: 'vllm-metrics-exposed: a negative running count',
      check: vllmMetricsExposed,
      metrics: () => instantChanged('vllm:num_requests_running', firstValue(-1)),
      error: 'MetricsValueOutOfDomainError',
      reason: /returned -1 for .*outside its domain \(>= 0: a count, rate, size or latency\)/,
    },
    {
      case: 'service-monitor-scraping: a +Inf sample time',
      check: serviceMonitorScraping,
      metrics: () => instantChanged('^timestamp\\(vllm:num_requests_running', firstValue(Infinity)),
      error: 'MetricsNonFiniteValueError',
      reason: new RegExp(`non-finite value \\(\\+Inf\\) for \\{"pod":"${PODS[0]}"`),
    },
    {
      case: 'service-monitor-scraping: a negative sample time',
      check: serviceMonitorScraping,
      metrics: () => instantChanged('^timestamp\\(vllm:num_requests_running', firstValue(-30)),
      error: 'MetricsValueOutOfDomainError',
      reason: /outside its domain \(>= 0: a sample time in Unix seconds\)/,
    },
    {
      case: 'dcgm-exporter: a negative framebuffer',
      check: dcgmExporter,
      metrics: () => instantChanged('DCGM_FI_DEV_FB_USED', firstValue(-40_000)),
      error: 'MetricsValueOutOfDomainError',
      reason: /returned -40000 for \{"pod":.*"UUID":"GPU-0"\}/,
    },
    {
      case: 'warmup: two series for one Pod',
      check: warmup,
      metrics: () => instantChanged('vllm:request_success_total', twiceForOnePod),
      error: 'MetricsMultipleSeriesError',
      reason: bothNamed,
    },
    {
      case: 'warmup: a -Inf request count',
      check: warmup,
      metrics: () => instantChanged('vllm:request_success_total', firstValue(-Infinity)),
      error: 'MetricsNonFiniteValueError',
      reason: /non-finite value \(-Inf\)/,
    },
    {
      case: 'scale-cycle: two count series',
      check: scaleCycle,
      metrics: () =>
        rangeChanged(([one]) => [
          { ...(one as RangeSeries), labels: { cluster: 'a' } },
          { ...(one as RangeSeries), labels: { cluster: 'b' } },
        ]),
      error: 'MetricsMultipleSeriesError',
      reason: /expected exactly one series, got 2 series: \{"cluster":"a"\}, \{"cluster":"b"\}/,
    },
    {
      case: 'scale-cycle: a negative Pod count',
      check: scaleCycle,
      metrics: () =>
        rangeChanged(([one]) => [
          { labels: {}, points: (one as RangeSeries).points.map((p, i) => (i === 2 ? { ...p, value: -2 } : p)) },
        ]),
      error: 'MetricsValueOutOfDomainError',
      reason: /returned -2 for \{\}/,
    },
  ])(
    '$case fails the check, naming the error, with the query as evidence',
    async ({ check, metrics, error, reason }) => {
      // Act
      const result = await run(check, preparedContext({ metrics: metrics() }));

      // Assess
      expect(result.status).toBe('fail');
      expect(result.reason).toMatch(new RegExp(`^AMP's answer cannot be used: ${error}: `));
      expect(result.reason).toMatch(reason);
      expect(result.evidence).toContainEqual(expect.objectContaining({ kind: 'series', detail: { refused: error } }));
      expect(result.fix).toMatch(/^Query AMP for the series the reason names/);
    },
  );
});

// The target the fakes describe, for readers of the reasons above.
void TARGET;
