import { type RenamedVllmMetric, VLLM, VLLM_RENAMED } from '../../metrics/index.js';
import { CHECK_IDS, type Evidence, type PreflightCheck } from '../types.js';
import { listText, objectEvidence, plural } from '../workload.js';

/** Both names of a series vLLM renamed, so that a dashboard written for any vLLM version counts. */
const bothNames = (metric: RenamedVllmMetric): string[] => [VLLM_RENAMED[metric].current, VLLM_RENAMED[metric].legacy];

/** A name as a literal in a regular expression. */
const literal = (name: string): string => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A query names one of these series: the whole name (a histogram's `_bucket`, `_sum` and `_count` series count), not a
 * part of a longer one (`vllm:num_requests_waiting` is not `vllm:num_requests_waiting_by_reason`).
 */
function seriesPattern(names: readonly string[]): RegExp {
  return new RegExp(`(?<![\\w:])(?:${names.map(literal).join('|')})(?:_bucket|_sum|_count)?(?![\\w:])`);
}

/**
 * A query names a series starting with one of these prefixes. Every NVIDIA dcgm-exporter field starts with `DCGM_`
 * and every kubelet cAdvisor container series with `container_` (`DCGM` and `CADVISOR` in shared/metrics/names.ts).
 */
function prefixPattern(prefixes: readonly string[]): RegExp {
  return new RegExp(`(?<![\\w:])(?:${prefixes.map(literal).join('|')})\\w`);
}

/**
 * The monitoring guide's three tiers (section 3), named as the guide names them, and what puts a panel's query in
 * each. Tiers 1 and 2 are the guide's vLLM series, under both names where vLLM renamed one (0.9 to latest); Tier 3 is
 * any DCGM field and the containers' CPU and memory.
 */
export const DASHBOARD_TIERS = [
  {
    tier: 1,
    name: 'Tier 1 (service quality)',
    pattern: seriesPattern([
      VLLM.e2eRequestLatency,
      VLLM.timeToFirstToken,
      ...bothNames('interTokenLatency'),
      VLLM.numRequestsWaiting,
      VLLM.numRequestsRunning,
      VLLM.requestSuccess,
    ]),
  },
  {
    tier: 2,
    name: 'Tier 2 (vLLM engine state)',
    pattern: seriesPattern([
      ...bothNames('kvCacheUsage'),
      VLLM.numPreemptions,
      VLLM.promptTokens,
      VLLM.generationTokens,
      VLLM.iterationTokens,
    ]),
  },
  { tier: 3, name: 'Tier 3 (GPU and infrastructure)', pattern: prefixPattern(['DCGM_', 'container_']) },
] as const;

/** Every `expr` string anywhere in a dashboard (panels, rows' nested panels, targets). */
function queriesOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) queriesOf(item, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (key === 'expr' && typeof child === 'string') out.push(child);
      else queriesOf(child, out);
    }
  }
  return out;
}

/**
 * Item 4: ConfigMaps (all namespaces) with the Grafana sidecar's label hold dashboards whose queries cover the three
 * tiers. A warn, not a fail: dashboards help people diagnose; traffic does not depend on them.
 */
export const grafanaDashboards: PreflightCheck = {
  id: CHECK_IDS.grafanaDashboards,
  item: 4,
  title: 'Grafana dashboards (Tier 1/2/3)',
  async run(context) {
    const { name, value } = context.settings.dashboardLabel;
    const configMaps = await context.cluster.list({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      labelSelector: { [name]: value },
    });
    const fix =
      'Apply the dashboards as sidecar ConfigMaps: kubectl apply -f infra/grafana/dashboards-configmaps.yaml (each ConfigMap carries grafana_dashboard: "1"), with Grafana\'s dashboard sidecar enabled (kube-prometheus-stack: grafana.sidecar.dashboards.enabled=true). Each tier needs a panel querying one of its series: Tier 1 vLLM latency, TTFT, inter-token latency, waiting, running or successful requests; Tier 2 KV-cache usage, preemptions, prompt, generation or iteration tokens; Tier 3 a DCGM_ or container_ series';
    if (configMaps.length === 0) {
      return {
        status: 'warn',
        reason: `no ConfigMap in any namespace has the Grafana sidecar label ${name}=${value}, so Grafana loads no dashboards`,
        evidence: [objectEvidence({ apiVersion: 'v1', kind: 'ConfigMap', name: `${name}=${value}` }, false)],
        fix,
      };
    }
    const evidence: Evidence[] = [];
    const covered = new Set<number>();
    let dashboards = 0;
    for (const cm of configMaps) {
      const files = Object.entries((cm as { data?: Record<string, string> }).data ?? {});
      const tiers = new Set<number>();
      let parsed = 0;
      for (const [, text] of files) {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          continue; // Not a dashboard (the sidecar skips it too).
        }
        parsed += 1;
        for (const expr of queriesOf(json))
          for (const t of DASHBOARD_TIERS) if (t.pattern.test(expr)) tiers.add(t.tier);
      }
      dashboards += parsed;
      for (const t of tiers) covered.add(t);
      evidence.push(
        objectEvidence(
          { apiVersion: 'v1', kind: 'ConfigMap', namespace: cm.metadata.namespace ?? '', name: cm.metadata.name },
          true,
          { dashboards: parsed, tiers: [...tiers].sort() },
        ),
      );
    }
    const missing = DASHBOARD_TIERS.filter((t) => !covered.has(t.tier)).map((t) => t.name);
    const where = `${plural(dashboards, 'dashboard')} in ${plural(configMaps.length, 'ConfigMap')} labelled ${name}=${value}`;
    if (missing.length > 0) {
      return {
        status: 'warn',
        reason: `${where}; no panel queries ${listText(missing)}`,
        evidence,
        fix,
      };
    }
    return {
      status: 'pass',
      reason: `${where} query all three tiers (service quality, vLLM engine state, GPU and infrastructure)`,
      evidence,
    };
  },
};
