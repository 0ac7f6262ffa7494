/**
 * Grafana template variables and how panel queries get them. The queries come from the metrics catalog and the
 * PromQL builders (one source for every query the product runs), which take a `Target` and a rate window and
 * validate both: a Grafana variable cannot pass through them. So the builders get placeholders that survive their
 * escaping unchanged, and `toTemplate` swaps the placeholders for the variables afterwards.
 */
import {
  assertDuration,
  type CatalogBuildOptions,
  catalogEntry,
  escapeLabelValue,
  formatMatchers,
  matchRegex,
  podNamePattern,
} from '../metrics/index.js';
import type { Target } from '../config/index.js';
import { DashboardMissingVariableError, DashboardTemplateError } from './errors.js';

/** The dashboards' template variables (names as they appear after `$`). */
export const DASHBOARD_VARIABLES = {
  datasource: 'datasource',
  namespace: 'namespace',
  model: 'model_name',
  pod: 'pod',
  /** Grafana's built-in: at least four scrape intervals, so a `rate()` always has two samples. */
  rateInterval: '__rate_interval',
} as const;

/** A name no Deployment of the user's is likely to have; only ever seen by `toTemplate`. */
const PLACEHOLDER_DEPLOYMENT = 'vllm-eks-pilot-dashboard-placeholder';
/** A window no panel uses on purpose (70 min 42 s); replaced by `$__rate_interval`. */
const PLACEHOLDER_WINDOW = '4242s';

/**
 * The target the builders are given: `$namespace` and `$model_name` are plain label values to them (escaping
 * leaves `$` alone), the Deployment is a placeholder whose Pod matcher `toTemplate` replaces by `pod=~"$pod"`.
 */
export const DASHBOARD_TARGET: Target = {
  name: 'grafana-dashboard',
  cluster: 'grafana-dashboard',
  namespace: `$${DASHBOARD_VARIABLES.namespace}`,
  deployment: PLACEHOLDER_DEPLOYMENT,
  model: `$${DASHBOARD_VARIABLES.model}`,
};

export const DASHBOARD_BUILD_OPTIONS: CatalogBuildOptions = { rateWindow: PLACEHOLDER_WINDOW };

/** The exact matcher text the builders emit for the placeholder Deployment's Pods. */
const PLACEHOLDER_POD_MATCHER = formatMatchers([matchRegex('pod', podNamePattern(PLACEHOLDER_DEPLOYMENT))]).slice(
  1,
  -1,
);
const TEMPLATE_POD_MATCHER = `pod=~"$${DASHBOARD_VARIABLES.pod}"`;
const TEMPLATE_WINDOW = `[$${DASHBOARD_VARIABLES.rateInterval}]`;

/** `$name` or `${name}` (Grafana's two plain forms). */
const VARIABLE_REFERENCE = /\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g;
const KNOWN = new Set<string>(Object.values(DASHBOARD_VARIABLES));

/** Turns a query built for `DASHBOARD_TARGET` into the Grafana form: `pod=~"$pod"`, `[$__rate_interval]`. */
export function toTemplate(built: string): string {
  const expr = built
    .replaceAll(PLACEHOLDER_POD_MATCHER, TEMPLATE_POD_MATCHER)
    .replaceAll(`[${PLACEHOLDER_WINDOW}]`, TEMPLATE_WINDOW);
  if (expr.includes(PLACEHOLDER_DEPLOYMENT) || expr.includes(PLACEHOLDER_WINDOW))
    throw new DashboardTemplateError('a placeholder survived: the PromQL builders changed what they emit', built);
  for (const [, name] of expr.matchAll(VARIABLE_REFERENCE))
    if (name !== undefined && !KNOWN.has(name))
      throw new DashboardTemplateError(`uses $${name}, which the dashboards do not define`, expr);
  return expr;
}

/** The Grafana form of the metrics catalog entry `id` (the same PromQL the monitor Lambda publishes). */
export function catalogQuery(id: string): string {
  return toTemplate(catalogEntry(id).build(DASHBOARD_TARGET, DASHBOARD_BUILD_OPTIONS));
}

/** The Grafana form of a query made with the PromQL builders of `shared/metrics/promql.ts`. */
export function builtQuery(build: (target: Target, options: CatalogBuildOptions) => string): string {
  return toTemplate(build(DASHBOARD_TARGET, DASHBOARD_BUILD_OPTIONS));
}

/** Values to render a dashboard query with, as Grafana would interpolate them. */
export interface DashboardVariableValues {
  namespace: string;
  model_name: string;
  /** A regular expression (RE2) for the Pods, e.g. `.+` (Grafana's "All" here) or `pod-a|pod-b`. */
  pod: string;
  /** A PromQL duration such as `1m`. */
  __rate_interval: string;
}

/**
 * Renders a dashboard query into plain PromQL, the way Grafana sends it: each variable replaced, label values escaped
 * for the string literal they sit in, the rate interval checked. For running the dashboards' queries outside
 * Grafana (tests, checks). Throws `DashboardMissingVariableError` for a variable it has no value for.
 */
export function renderQuery(expr: string, values: DashboardVariableValues): string {
  const table: Readonly<Record<string, string>> = { ...values };
  return expr.replace(VARIABLE_REFERENCE, (_reference, name: string) => {
    const value = table[name];
    if (value === undefined) throw new DashboardMissingVariableError(name, expr);
    return name === DASHBOARD_VARIABLES.rateInterval
      ? assertDuration(value, '__rate_interval')
      : escapeLabelValue(value);
  });
}
