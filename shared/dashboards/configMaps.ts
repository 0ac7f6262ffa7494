import { TARGET_NAME_RULES } from '../config/index.js';
import { MANAGED_BY } from '../kube/manifests/index.js';
import type { KubeObject } from '../kube/index.js';
import { DashboardInvalidOptionError } from './errors.js';
import { dashboardJson } from './grafanaJson.js';
import { DASHBOARDS } from './dashboards.js';
import type { GrafanaDashboard } from './types.js';

/**
 * The label Grafana's dashboard sidecar watches (the grafana Helm chart's `sidecar.dashboards.label` and
 * `labelValue` defaults, also kube-prometheus-stack's): every ConfigMap carrying it is loaded as dashboards.
 */
export const GRAFANA_SIDECAR_LABEL = { name: 'grafana_dashboard', value: '1' } as const;

/** kube-prometheus-stack installs Grafana (and its sidecar, which searches its own namespace by default) here. */
export const DEFAULT_DASHBOARD_NAMESPACE = 'monitoring';

export interface DashboardConfigMapOptions {
  /** Where Grafana's sidecar looks for dashboards (default `monitoring`). */
  namespace?: string;
}

/** The ConfigMap name of a dashboard: its uid plus `-dashboard` (uids are DNS-1123 labels, so is the name). */
export function dashboardConfigMapName(dashboard: GrafanaDashboard): string {
  return `${dashboard.uid}-dashboard`;
}

/**
 * One ConfigMap per dashboard, labelled for Grafana's sidecar (`grafana_dashboard: "1"`), the JSON model under the
 * key `<uid>.json`. Apply them to the sidecar's namespace; Grafana picks them up without a restart.
 */
export function grafanaDashboardConfigMaps(options: DashboardConfigMapOptions = {}): KubeObject[] {
  const namespace = options.namespace ?? DEFAULT_DASHBOARD_NAMESPACE;
  const rule = TARGET_NAME_RULES.dns1123Label;
  if (!rule.pattern.test(namespace)) throw new DashboardInvalidOptionError('namespace', namespace, rule.accepted);
  return DASHBOARDS.map((dashboard) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: dashboardConfigMapName(dashboard),
      namespace,
      labels: { [GRAFANA_SIDECAR_LABEL.name]: GRAFANA_SIDECAR_LABEL.value, ...MANAGED_BY },
    },
    data: { [`${dashboard.uid}.json`]: dashboardJson(dashboard) },
  }));
}
