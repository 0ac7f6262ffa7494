/**
 * PromQL building: escaping, label matchers for a `Target`, and the few expression shapes the product uses.
 * Every query string is assembled here or in `catalog.ts`, so a value from configuration (a model name, a
 * namespace) always reaches Prometheus escaped, and never changes a query's meaning.
 */
import { VLLM_RENAMED, type RenamedVllmMetric } from './names.js';
import type { Target } from '../config/index.js';
import {
  MetricsInvalidTargetError,
  PromqlInvalidArgumentError,
  PromqlInvalidLabelNameError,
  PromqlInvalidMetricNameError,
} from './errors.js';

/** Prometheus label names (data model docs): `[a-zA-Z_][a-zA-Z0-9_]*`. */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Prometheus metric names (data model docs): `[a-zA-Z_:][a-zA-Z0-9_:]*`; vLLM's names carry a colon. */
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** PromQL durations as Prometheus 2.x parses them (`model.ParseDuration`): units in this order, each at most once. */
const DURATION = /^(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?$/;
/** An unpaired UTF-16 surrogate cannot be encoded as UTF-8, which the PromQL lexer requires. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** The characters Go's `regexp.QuoteMeta` escapes: RE2's metacharacters. */
const RE2_META = /[\\.+*?()|[\]{}^$]/g;

/** Escapes named by the Go spec (PromQL's lexer accepts Go string escapes, then `strconv.Unquote`s the literal). */
const NAMED_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '"': '\\"',
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

/** DCGM exporter label names (render_metrics.go): the GPU's UUID is the stable per-GPU key; `gpu` is an index. */
export const DCGM_LABELS = { uuid: 'UUID', pod: 'pod', namespace: 'namespace', container: 'container' } as const;

/**
 * Returns the body of a double-quoted PromQL string literal for `value`: backslash, double quote, newline and every
 * other control character are escaped, so the literal parses back to exactly `value`.
 */
export function escapeLabelValue(value: string): string {
  if (LONE_SURROGATE.test(value)) {
    throw new PromqlInvalidArgumentError('label value', value, 'well-formed Unicode text (no unpaired surrogates)');
  }
  let out = '';
  for (const char of value) {
    const named = NAMED_ESCAPES[char];
    if (named !== undefined) {
      out += named;
      continue;
    }
    const code = char.codePointAt(0) ?? 0;
    // C0, DEL and C1 controls: `\u` rather than `\x`, because Go's Unquote turns `\x80`-`\xff` into raw bytes.
    const control = code < 0x20 || (code >= 0x7f && code <= 0x9f);
    out += control ? `\\u${code.toString(16).padStart(4, '0')}` : char;
  }
  return out;
}

/** Returns `value` with RE2 metacharacters escaped, so that inside `=~` it matches only itself, literally. */
export function escapeRegex(value: string): string {
  return value.replace(RE2_META, '\\$&');
}

/** Throws `PromqlInvalidLabelNameError` unless `name` is a valid label name; `field` names it in the message. */
export function assertLabelName(name: string, field = 'label name'): string {
  if (!LABEL_NAME.test(name)) throw new PromqlInvalidLabelNameError(name, field);
  return name;
}

/** Throws `PromqlInvalidMetricNameError` unless `name` is a valid metric name. */
export function assertMetricName(name: string): string {
  if (!METRIC_NAME.test(name)) throw new PromqlInvalidMetricNameError(name);
  return name;
}

/** Throws unless `window` is a positive PromQL duration such as `2m`, `90s` or `1h30m`. */
export function assertDuration(window: string, field = 'rateWindow'): string {
  if (window === '' || !DURATION.test(window) || !/[1-9]/.test(window)) {
    throw new PromqlInvalidArgumentError(field, window, 'a positive PromQL duration such as "30s", "2m" or "1h30m"');
  }
  return window;
}

// ---------------------------------------------------------------------------------------------------------------
// Matchers and selectors

export const MATCH_OPS = { equal: '=', notEqual: '!=', regex: '=~', notRegex: '!~' } as const;
export type MatchOp = (typeof MATCH_OPS)[keyof typeof MATCH_OPS];

/** One label matcher. For `=~`/`!~` the value is a regular expression (build it with `escapeRegex`). */
export interface LabelMatcher {
  name: string;
  op: MatchOp;
  value: string;
}

/** `name="value"` */
export function eq(name: string, value: string): LabelMatcher {
  return { name, op: '=', value };
}

/** `name!="value"` */
export function neq(name: string, value: string): LabelMatcher {
  return { name, op: '!=', value };
}

/** `name=~"regex"` (anchored by Prometheus at both ends). */
export function matchRegex(name: string, regex: string): LabelMatcher {
  return { name, op: '=~', value: regex };
}

/** Renders matchers as `{a="x", b=~"y"}`, validating names and escaping values. */
export function formatMatchers(matchers: readonly LabelMatcher[]): string {
  const parts = matchers.map((m) => `${assertLabelName(m.name)}${m.op}"${escapeLabelValue(m.value)}"`);
  return `{${parts.join(', ')}}`;
}

/** Renders an instant-vector selector `metric{matchers}`. */
export function selector(metric: string, matchers: readonly LabelMatcher[]): string {
  return `${assertMetricName(metric)}${formatMatchers(matchers)}`;
}

/**
 * The regex for the Pods of a Deployment: `<deployment>-<pod-template-hash>-<suffix>`, both generated parts
 * lower-case alphanumerics (Kubernetes' ReplicaSet and Pod name generators).
 */
export function podNamePattern(deployment: string): string {
  return `${escapeRegex(deployment)}-[a-z0-9]+-[a-z0-9]+`;
}

/** Checks the `Target` fields that become matchers; an empty value would match series that lack the label. */
export function assertTarget(target: Target): Target {
  const required = ['namespace', 'deployment', 'model'] as const;
  for (const field of required) {
    if (typeof target[field] !== 'string' || target[field] === '') {
      throw new MetricsInvalidTargetError(field, 'must not be empty', 'a non-empty string');
    }
  }
  if (target.clusterLabel !== undefined) {
    assertLabelName(target.clusterLabel, 'target.clusterLabel');
    if (target.cluster === '') {
      throw new MetricsInvalidTargetError(
        'cluster',
        'must not be empty when clusterLabel is set',
        'a non-empty string',
      );
    }
  }
  return target;
}

function clusterMatchers(target: Target): LabelMatcher[] {
  return target.clusterLabel === undefined ? [] : [eq(target.clusterLabel, target.cluster)];
}

/** Matchers for the target's vLLM series: namespace, model, the Deployment's Pods, and the cluster when labelled. */
export function vllmMatchers(target: Target): LabelMatcher[] {
  assertTarget(target);
  return [
    eq('namespace', target.namespace),
    eq('model_name', target.model),
    matchRegex('pod', podNamePattern(target.deployment)),
    ...clusterMatchers(target),
  ];
}

/**
 * Matchers for the DCGM series of the target's GPUs. They use the exporter's own `namespace`/`pod` labels (the
 * Pod the GPU is allocated to), which survive scraping only with `honorLabels: true` on the exporter's
 * ServiceMonitor; otherwise Prometheus renames them `exported_*`.
 */
export function dcgmMatchers(target: Target): LabelMatcher[] {
  assertTarget(target);
  return [
    eq(DCGM_LABELS.namespace, target.namespace),
    matchRegex(DCGM_LABELS.pod, podNamePattern(target.deployment)),
    ...clusterMatchers(target),
  ];
}

/**
 * Matchers for the kubelet cAdvisor series of the target's containers. `container=""` is the Pod-level cgroup
 * and `container="POD"` the pause container: both would double-count.
 */
export function cadvisorMatchers(target: Target): LabelMatcher[] {
  assertTarget(target);
  return [
    eq('namespace', target.namespace),
    matchRegex('pod', podNamePattern(target.deployment)),
    neq('container', ''),
    neq('container', 'POD'),
    ...clusterMatchers(target),
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Expressions

/** `rate(<selector>[window])` */
export function rate(selectorText: string, window: string): string {
  return `rate(${selectorText}[${assertDuration(window)}])`;
}

export const AGGREGATIONS = { sum: 'sum', max: 'max', min: 'min', avg: 'avg' } as const;
export type Aggregation = (typeof AGGREGATIONS)[keyof typeof AGGREGATIONS];

/** `op by (labels) (expr)`, or `op(expr)` when `by` is empty. */
export function aggregate(op: Aggregation, by: readonly string[], expr: string): string {
  if (by.length === 0) return `${op}(${expr})`;
  const labels = by.map((label) => assertLabelName(label, 'aggregation label')).join(', ');
  return `${op} by (${labels}) (${expr})`;
}

/** `histogram_quantile(q, expr)`; `expr` must keep the `le` label. */
export function histogramQuantile(q: number, expr: string): string {
  if (!Number.isFinite(q) || q < 0 || q > 1) {
    throw new PromqlInvalidArgumentError('quantile', q, 'a number from 0 to 1');
  }
  return `histogram_quantile(${q}, ${expr})`;
}

/**
 * Drops NaN samples: every comparison with NaN is false, so `x > -Inf` keeps each finite (and +Inf) sample and
 * filters NaN. An idle target then answers "no series" instead of NaN (0/0 from a ratio of zero rates, or a
 * quantile of an empty histogram window).
 */
export function dropNaN(expr: string): string {
  return `(${expr}) > -Inf`;
}

/** `factor * (expr)`, e.g. 100 to report a 0-1 fraction as Percent. */
export function scale(factor: number, expr: string): string {
  if (!Number.isFinite(factor)) throw new PromqlInvalidArgumentError('factor', factor, 'a finite number');
  return `${factor} * (${expr})`;
}

/** `(left) + (right)`, matched on identical label sets. */
export function plus(left: string, right: string): string {
  return `(${left}) + (${right})`;
}

/** `(numerator) / (denominator)`, matched on identical label sets. */
export function ratio(numerator: string, denominator: string): string {
  return `(${numerator}) / (${denominator})`;
}

// ---------------------------------------------------------------------------------------------------------------
// vLLM series (fixed and renamed names)

/** A vLLM series: a fixed exposed name (`VLLM.*`), or `{ renamed }` naming a concept of `VLLM_RENAMED`. */
export type VllmMetricRef = string | { renamed: RenamedVllmMetric };

/** The exposed names behind a reference: one, or for a renamed concept the current name then the legacy name. */
export function vllmNames(ref: VllmMetricRef): string[] {
  if (typeof ref === 'string') return [ref];
  const { current, legacy } = VLLM_RENAMED[ref.renamed];
  return [current, legacy];
}

/**
 * Builds `build(name)` for every exposed name of `ref`, joined with `or`: `(build(current) or build(legacy))`.
 *
 * Why `or`: vLLM renamed these series (0.9 has the old name, 0.11 both, 0.12+ the new one). `or` keeps a
 * right-hand series only when no left-hand series has the same labels (ignoring the metric name), so one query
 * works on any era and on a fleet mid-upgrade, the current name wins where both exist (no double counting), and no
 * detection query is needed: no extra round trip, no extra AMP query samples (QSP) billed.
 * Apply it to the innermost series (before `sum`/`max`), so each Pod contributes the name it exposes.
 */
export function overVllmNames(ref: VllmMetricRef, build: (metricName: string) => string): string {
  const names = vllmNames(ref);
  if (names.length === 1) return build(names[0] ?? '');
  return `(${names.map(build).join(' or ')})`;
}

/** `metric{<target's vLLM matchers>, ...extra}` for one exposed name. */
export function vllmSelector(target: Target, metricName: string, extra: readonly LabelMatcher[] = []): string {
  return selector(metricName, [...vllmMatchers(target), ...extra]);
}

/** The target's gauge series for `ref` (both names for a renamed concept). */
export function vllmGauge(target: Target, ref: VllmMetricRef, extra: readonly LabelMatcher[] = []): string {
  return overVllmNames(ref, (name) => vllmSelector(target, name, extra));
}

/** The per-series rate of the target's counter `ref` (both names for a renamed concept). */
export function vllmRate(
  target: Target,
  ref: VllmMetricRef,
  window: string,
  extra: readonly LabelMatcher[] = [],
): string {
  return overVllmNames(ref, (name) => rate(vllmSelector(target, name, extra), window));
}

/**
 * The q-quantile of the target's vLLM histogram `ref` over `window`, NaN dropped:
 * `histogram_quantile(q, sum by (le) (rate(<name>_bucket{sel}[window]))) > -Inf`
 * (the form of the Prometheus docs and of the EKS guide's KEDA trigger).
 */
export function vllmHistogramQuantile(target: Target, q: number, ref: VllmMetricRef, window: string): string {
  const buckets = overVllmNames(ref, (name) => rate(vllmSelector(target, `${name}_bucket`), window));
  return dropNaN(histogramQuantile(q, aggregate('sum', ['le'], buckets)));
}

/** `metric{<target's DCGM matchers>}` */
export function dcgmSelector(target: Target, metricName: string): string {
  return selector(metricName, dcgmMatchers(target));
}

/** `metric{<target's cAdvisor matchers>}` */
export function cadvisorSelector(target: Target, metricName: string): string {
  return selector(metricName, cadvisorMatchers(target));
}
