/**
 * The Grafana dashboards of the monitoring guide's three tiers, built from the metrics catalog and the PromQL
 * builders, so a dashboard shows exactly what the monitor publishes and the alerts evaluate.
 */
import { toGrafanaDashboard } from './grafanaJson.js';
import { TIER1_SERVICE } from './tier1Service.js';
import { TIER2_ENGINE } from './tier2Engine.js';
import { TIER3_GPU } from './tier3Gpu.js';
import type { DashboardSpec, GrafanaDashboard, GrafanaPanel } from './types.js';

export { ALL_PODS, DASHBOARD_TAG, GRAFANA_SCHEMA_VERSION, VARIABLE_SOURCES, dashboardJson } from './grafanaJson.js';
export { DASHBOARD_VARIABLES, renderQuery, type DashboardVariableValues } from './variables.js';
export type { DashboardSpec, GrafanaDashboard, PanelSpec } from './types.js';

/** The product's definitions of the dashboards, Tier 1 to 3. */
export const DASHBOARD_SPECS: readonly DashboardSpec[] = [TIER1_SERVICE, TIER2_ENGINE, TIER3_GPU];

/** The dashboards as Grafana JSON models, Tier 1 to 3. */
export const DASHBOARDS: readonly GrafanaDashboard[] = DASHBOARD_SPECS.map(toGrafanaDashboard);

/** A panel's PromQL query: the panel's title and the expression in Grafana form. */
export interface DashboardQuery {
  panel: string;
  expr: string;
}

function flatten(panels: readonly GrafanaPanel[]): GrafanaPanel[] {
  return panels.flatMap((panel) => [panel, ...flatten(panel.panels ?? [])]);
}

/**
 * Every PromQL expression of `dashboard` with its panel's title, panel order (collapsed rows' panels included).
 * Works on any Grafana JSON model, e.g. one read back from a ConfigMap.
 */
export function dashboardQueries(dashboard: GrafanaDashboard): DashboardQuery[] {
  return flatten(dashboard.panels).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
  );
}
