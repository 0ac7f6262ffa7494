import { CHECK_IDS, type Evidence, type PreflightCheck } from '../types.js';
import { listText, objectEvidence, plural } from '../workload.js';

/**
 * The monitoring guide's three tiers and a metric-name prefix that marks each in a panel query: vLLM's own series
 * (`vllm:`), NVIDIA DCGM (`DCGM_`), and the kubelet's cAdvisor container series (`container_`).
 */
export const DASHBOARD_TIERS = [
  { tier: 1, name: 'Tier 1 (vLLM)', pattern: /vllm:/ },
  { tier: 2, name: 'Tier 2 (DCGM GPU)', pattern: /DCGM_/ },
  { tier: 3, name: 'Tier 3 (container)', pattern: /container_/ },
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
      'Apply the dashboards as sidecar ConfigMaps: kubectl apply -f infra/grafana/dashboards-configmaps.yaml (each ConfigMap carries grafana_dashboard: "1"), with Grafana\'s dashboard sidecar enabled (kube-prometheus-stack: grafana.sidecar.dashboards.enabled=true)';
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
    return { status: 'pass', reason: `${where} query all three tiers (vllm:, DCGM_, container_)`, evidence };
  },
};
