/**
 * The alert rules as files: Prometheus and AMP rule groups, the PrometheusRule manifest, promtool tests, AMP's
 * Alertmanager definition, the docs table.
 */
export { renderAlertTable } from './alertTable.js';
export { ampAlertManagerDefinition } from './ampAlertManagerDefinition.js';
export { prometheusRuleManifest } from './prometheusRule.js';
export { promtoolTestFile } from './promtoolTests.js';
export { alertRuleGroups, toYaml } from './ruleGroups.js';
export { AMP_RULE_NAMESPACE_LIMITS, ampRuleGroupsNamespaceData } from './rulesFile.js';
