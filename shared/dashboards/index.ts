/** The Grafana dashboards of the monitoring guide's three tiers, and their sidecar ConfigMaps. */
export { grafanaDashboardConfigMaps } from './configMaps.js';
export { DASHBOARDS, DASHBOARD_SPECS, dashboardQueries } from './dashboards.js';
export { ALL_PODS, VARIABLE_SOURCES, dashboardJson } from './grafanaJson.js';
export { renderQuery, type DashboardVariableValues } from './variables.js';
