import { eq, selector, VLLM } from '../metrics/index.js';
import type {
  DashboardSpec,
  GrafanaDashboard,
  GrafanaDatasourceRef,
  GrafanaPanel,
  GrafanaTarget,
  GrafanaVariable,
  PanelSpec,
} from './types.js';
import { DASHBOARD_VARIABLES } from './variables.js';

/** Grafana 10.3+ writes schemaVersion 39; older Grafana refuses nothing in it that these dashboards use. */
export const GRAFANA_SCHEMA_VERSION = 39;
/** Every dashboard carries it; the dashboards link to each other through it. */
export const DASHBOARD_TAG = 'vllm-eks-pilot';

/** Every query goes to the data source the user picks (AMP or an in-cluster Prometheus), never a fixed uid. */
const DATASOURCE: GrafanaDatasourceRef = { type: 'prometheus', uid: `\${${DASHBOARD_VARIABLES.datasource}}` };
const GRID_COLUMNS = 24;
const PANEL_HEIGHT = 8;
const DEFAULT_WIDTH = 12;

/**
 * A query variable's source: Grafana runs `label_values(<selector>, <label>)`. `vllm:num_requests_running` has kept
 * its name in every vLLM version, and every engine exports it from start, idle or not, so the lists are never empty
 * for a running model.
 */
export interface VariableSource {
  name: string;
  label: string;
  /** The series to list label values of, in Grafana form (may use the variables before it). */
  selector: string;
  multi: boolean;
}

/** The query variables, in the order Grafana resolves them (each may use the ones before it). */
export const VARIABLE_SOURCES: readonly VariableSource[] = [
  {
    name: DASHBOARD_VARIABLES.namespace,
    label: 'Namespace',
    selector: selector(VLLM.numRequestsRunning, []),
    multi: false,
  },
  {
    name: DASHBOARD_VARIABLES.model,
    label: 'Model',
    selector: selector(VLLM.numRequestsRunning, [eq('namespace', `$${DASHBOARD_VARIABLES.namespace}`)]),
    multi: false,
  },
  {
    name: DASHBOARD_VARIABLES.pod,
    label: 'Pod',
    selector: selector(VLLM.numRequestsRunning, [
      eq('namespace', `$${DASHBOARD_VARIABLES.namespace}`),
      eq('model_name', `$${DASHBOARD_VARIABLES.model}`),
    ]),
    multi: true,
  },
];

/** The value Grafana substitutes for "All" Pods: any non-empty name (the Pods are already chosen by model). */
export const ALL_PODS = '.+';

function templating(): GrafanaVariable[] {
  const datasource: GrafanaVariable = {
    name: DASHBOARD_VARIABLES.datasource,
    label: 'Data source',
    type: 'datasource',
    query: 'prometheus',
    current: {},
    hide: 0,
    includeAll: false,
    multi: false,
    options: [],
    refresh: 1,
    regex: '',
  };
  const queries = VARIABLE_SOURCES.map((source): GrafanaVariable => {
    const query = `label_values(${source.selector}, ${source.name})`;
    return {
      name: source.name,
      label: source.label,
      type: 'query',
      datasource: DATASOURCE,
      query,
      definition: query,
      current: {},
      hide: 0,
      multi: source.multi,
      includeAll: source.multi,
      ...(source.multi ? { allValue: ALL_PODS } : {}),
      options: [],
      // 2 = on time range change, so a new Pod shows up without reloading the dashboard.
      refresh: 2,
      regex: '',
      sort: 1,
    };
  });
  return [datasource, ...queries];
}

const REF_IDS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

function targets(panel: PanelSpec): GrafanaTarget[] {
  return panel.queries.map((query, index) => ({
    refId: REF_IDS[index] ?? `Q${index}`,
    datasource: DATASOURCE,
    expr: query.expr,
    legendFormat: query.legend,
    // A gauge shows the latest value only; stat and time series draw the range.
    range: panel.kind !== 'gauge',
    instant: panel.kind === 'gauge',
    editorMode: 'code',
  }));
}

function fieldDefaults(panel: PanelSpec): Record<string, unknown> {
  const steps = [
    { color: 'green', value: null },
    ...(panel.thresholds ?? []).map((step) => ({ color: step.color, value: step.value })),
  ];
  const timeseries = panel.kind === 'timeseries';
  return {
    unit: panel.unit,
    ...(panel.min === undefined ? {} : { min: panel.min }),
    ...(panel.max === undefined ? {} : { max: panel.max }),
    thresholds: { mode: 'absolute', steps },
    color: { mode: timeseries ? 'palette-classic' : 'thresholds' },
    ...(timeseries
      ? {
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 10,
            showPoints: 'never',
            spanNulls: false,
            thresholdsStyle: { mode: panel.thresholds === undefined ? 'off' : 'line' },
          },
        }
      : {}),
  };
}

function options(panel: PanelSpec): Record<string, unknown> {
  const lastValue = { calcs: ['lastNotNull'], fields: '', values: false };
  switch (panel.kind) {
    case 'timeseries':
      return {
        legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
        tooltip: { mode: 'multi', sort: 'desc' },
      };
    case 'stat':
      return {
        reduceOptions: lastValue,
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
      };
    case 'gauge':
      return { reduceOptions: lastValue, orientation: 'auto', showThresholdLabels: false, showThresholdMarkers: true };
  }
}

/** Lays the rows out top to bottom, each row's panels left to right, wrapping at Grafana's 24 columns. */
function panels(spec: DashboardSpec): GrafanaPanel[] {
  const out: GrafanaPanel[] = [];
  let id = 1;
  let y = 0;
  for (const row of spec.rows) {
    out.push({
      id: id++,
      type: 'row',
      title: row.title,
      collapsed: false,
      panels: [],
      gridPos: { h: 1, w: 24, x: 0, y },
    });
    y += 1;
    let x = 0;
    for (const panel of row.panels) {
      const w = panel.width ?? DEFAULT_WIDTH;
      if (x + w > GRID_COLUMNS) {
        x = 0;
        y += PANEL_HEIGHT;
      }
      out.push({
        id: id++,
        type: panel.kind,
        title: panel.title,
        description: panel.description,
        gridPos: { h: PANEL_HEIGHT, w, x, y },
        datasource: DATASOURCE,
        targets: targets(panel),
        fieldConfig: { defaults: fieldDefaults(panel), overrides: [] },
        options: options(panel),
      });
      x += w;
    }
    y += PANEL_HEIGHT;
  }
  return out;
}

/** The Grafana JSON model of `spec` (schemaVersion 39), ready for the sidecar, file provisioning or import. */
export function toGrafanaDashboard(spec: DashboardSpec): GrafanaDashboard {
  return {
    uid: spec.uid,
    title: spec.title,
    description: spec.description,
    tags: ['vllm', DASHBOARD_TAG, `tier-${spec.tier}`],
    schemaVersion: GRAFANA_SCHEMA_VERSION,
    version: 1,
    editable: true,
    // 1 = shared crosshair: a queue spike lines up with the latency and KV-cache panels below it.
    graphTooltip: 1,
    // AMP lags live state by up to about a minute (remote-write batching): refreshing faster shows nothing new.
    refresh: '1m',
    time: { from: 'now-1h', to: 'now' },
    timezone: 'browser',
    templating: { list: templating() },
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    links: [
      {
        title: 'vLLM tiers',
        type: 'dashboards',
        tags: [DASHBOARD_TAG],
        asDropdown: true,
        includeVars: true,
        keepTime: true,
        icon: 'external link',
        targetBlank: false,
        tooltip: '',
        url: '',
      },
    ],
    panels: panels(spec),
  };
}

/** The dashboard as a file: two-space JSON with a final newline (the form committed under infra/grafana/). */
export function dashboardJson(dashboard: GrafanaDashboard): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}
