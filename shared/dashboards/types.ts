/**
 * The dashboards as the product defines them (`DashboardSpec`: what each panel shows and why) and as Grafana reads
 * them (`GrafanaDashboard`: the JSON model, schemaVersion 39, what the sidecar loads from a ConfigMap).
 */

/** Grafana unit ids the panels use (Grafana's `valueFormats`): `mbytes` is MiB, as DCGM reports framebuffer. */
export const GRAFANA_UNITS = {
  seconds: 's',
  percent: 'percent',
  requestsPerSecond: 'reqps',
  perSecond: 'suffix:/s',
  tokensPerSecond: 'suffix: tok/s',
  count: 'short',
  mebibytes: 'mbytes',
  bytes: 'bytes',
  watts: 'watt',
  cores: 'short',
} as const;

export type GrafanaUnit = (typeof GRAFANA_UNITS)[keyof typeof GRAFANA_UNITS];

/** The panel types used: a line chart over time, a single big number, a dial. */
export const PANEL_KINDS = { timeseries: 'timeseries', stat: 'stat', gauge: 'gauge' } as const;
export type PanelKind = (typeof PANEL_KINDS)[keyof typeof PANEL_KINDS];

/** One query of a panel: the Grafana-form PromQL (with `$namespace`, `$model_name`, `$pod`, `$__rate_interval`). */
export interface PanelQuery {
  expr: string;
  /** Grafana's legend template, e.g. `p95` or `{{pod}}`. */
  legend: string;
}

/** A threshold step: from `value` on, the panel shows `color` (the guide's attention and action levels). */
export interface ThresholdStep {
  value: number;
  color: 'yellow' | 'orange' | 'red';
}

/** One panel as the product defines it. */
export interface PanelSpec {
  title: string;
  /** What the panel means and its normal range (shown as the panel's info tooltip). */
  description: string;
  kind: PanelKind;
  unit: GrafanaUnit;
  queries: readonly PanelQuery[];
  /** Steps above green, in ascending order. */
  thresholds?: readonly ThresholdStep[];
  min?: number;
  max?: number;
  /** Grid width in Grafana's 24 columns (default 12). */
  width?: number;
  /**
   * An empty answer is expected where the source series are off by default (the DCGM ECC fields), so a check
   * that every panel has data must not count this one.
   */
  optional?: boolean;
}

/** A titled row of panels. */
export interface RowSpec {
  title: string;
  panels: readonly PanelSpec[];
}

/** One dashboard as the product defines it: one tier of the monitoring guide. */
export interface DashboardSpec {
  uid: string;
  title: string;
  tier: 1 | 2 | 3;
  description: string;
  rows: readonly RowSpec[];
}

// ---------------------------------------------------------------------------------------------------------------
// Grafana's JSON model (the fields the product writes; Grafana fills in the rest when it loads the dashboard)

export interface GrafanaDatasourceRef {
  type: 'prometheus';
  uid: string;
}

export interface GrafanaTarget {
  refId: string;
  datasource: GrafanaDatasourceRef;
  expr: string;
  legendFormat: string;
  range: boolean;
  instant: boolean;
  editorMode: 'code';
}

export interface GrafanaPanel {
  id: number;
  type: 'row' | PanelKind;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  description?: string;
  datasource?: GrafanaDatasourceRef;
  targets?: GrafanaTarget[];
  fieldConfig?: { defaults: Record<string, unknown>; overrides: unknown[] };
  options?: Record<string, unknown>;
  collapsed?: boolean;
  panels?: GrafanaPanel[];
}

export interface GrafanaVariable {
  name: string;
  label: string;
  type: 'datasource' | 'query';
  query: string;
  [field: string]: unknown;
}

export interface GrafanaDashboard {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  schemaVersion: number;
  version: number;
  editable: boolean;
  graphTooltip: number;
  refresh: string;
  time: { from: string; to: string };
  timezone: string;
  templating: { list: GrafanaVariable[] };
  annotations: { list: unknown[] };
  links: unknown[];
  panels: GrafanaPanel[];
}
