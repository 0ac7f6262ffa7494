/**
 * KEDA's Prometheus scaler: the trigger metadata it reads and how it turns a query answer into one number.
 * Source: kedacore/keda v2.20 `pkg/scalers/prometheus_scaler.go` (see also the keda-docs "Prometheus" scaler page).
 *
 * `serverAddress` names AMP or the in-cluster Prometheus; the twin always queries its own Prometheus (the one that
 * scrapes the twin's replicas, whose HTTP API is the one AMP offers), so the address is kept only for display.
 */
import type { InstantSample } from '../../../shared/metrics/index.js';
import { KedaInvalidTriggerError, KedaTriggerQueryError } from './errors.js';
import { METRIC_TARGET_TYPES, type MetricTargetType } from './hpaAlgorithm.js';

/** A ScaledObject trigger as written (spec.triggers[i]). */
export interface ScaledObjectTrigger {
  type: string;
  name?: string;
  metricType?: string;
  metadata: Record<string, string>;
  authenticationRef?: { name: string; kind?: string };
  useCachedMetrics?: boolean;
}

/** A parsed `prometheus` trigger. */
export interface PrometheusTrigger {
  index: number;
  /** The external metric name KEDA gives it: `s<index>-prometheus`. */
  metricName: string;
  /** The trigger's `name`, when set (used in reasons). */
  name?: string;
  serverAddress: string;
  query: string;
  threshold: number;
  activationThreshold: number;
  metricType: MetricTargetType;
  /** Default true: an empty answer (or NaN / ±Inf) counts as 0 instead of failing the trigger. */
  ignoreNullValues: boolean;
}

/** Parses trigger `index` of a ScaledObject as KEDA's Prometheus scaler would; throws naming the bad field. */
export function parsePrometheusTrigger(trigger: ScaledObjectTrigger, index: number): PrometheusTrigger {
  const at = `spec.triggers[${index}]`;
  if (trigger.type !== 'prometheus') {
    throw new KedaInvalidTriggerError(
      `${at}.type`,
      `got ${JSON.stringify(trigger.type)}, which the twin's KEDA emulation does not run`,
      'prometheus',
    );
  }
  const metadata = trigger.metadata ?? {};
  const serverAddress = required(metadata, 'serverAddress', at);
  try {
    new URL(serverAddress);
  } catch (error) {
    throw new KedaInvalidTriggerError(
      `${at}.metadata.serverAddress`,
      `got ${JSON.stringify(serverAddress)}`,
      'a URL such as http://prometheus.monitoring.svc:9090',
      { cause: error },
    );
  }
  const query = required(metadata, 'query', at);
  const threshold = float(metadata, 'threshold', at, undefined);
  if (!(threshold > 0)) {
    throw new KedaInvalidTriggerError(
      `${at}.metadata.threshold`,
      `got ${JSON.stringify(metadata.threshold)}`,
      'a number > 0',
    );
  }
  const activationThreshold = float(metadata, 'activationThreshold', at, 0);
  const metricType = trigger.metricType ?? 'AverageValue';
  if (!Object.hasOwn(METRIC_TARGET_TYPES, metricType)) {
    throw new KedaInvalidTriggerError(
      `${at}.metricType`,
      `got ${JSON.stringify(metricType)}${metricType === 'Utilization' ? ' (scalers other than cpu/memory do not support it)' : ''}`,
      'AverageValue (default), Value',
    );
  }
  return {
    index,
    metricName: `s${index}-prometheus`,
    ...(trigger.name ? { name: trigger.name } : {}),
    serverAddress,
    query,
    threshold,
    activationThreshold,
    metricType: metricType as MetricTargetType,
    ignoreNullValues: bool(metadata, 'ignoreNullValues', at, true),
  };
}

/**
 * The trigger's value from an instant-query answer, with the scaler's rules: exactly one series; none (or a NaN /
 * ±Inf value) is 0 when ignoreNullValues is true, else an error; several series are always an error.
 */
export function triggerValue(trigger: PrometheusTrigger, samples: readonly InstantSample[]): number {
  const [first] = samples;
  if (first === undefined) {
    if (trigger.ignoreNullValues) return 0;
    throw new KedaTriggerQueryError(
      trigger.metricName,
      trigger.query,
      "prometheus metrics 'prometheus' target may be lost, the result is empty",
    );
  }
  if (samples.length > 1) {
    throw new KedaTriggerQueryError(
      trigger.metricName,
      trigger.query,
      `prometheus query ${trigger.query} returned multiple elements (${samples.length} series)`,
    );
  }
  if (!Number.isFinite(first.value)) {
    if (trigger.ignoreNullValues) return 0;
    throw new KedaTriggerQueryError(trigger.metricName, trigger.query, `prometheus query returns ${first.value}`);
  }
  return first.value;
}

/** Whether a value activates the trigger: strictly above its activationThreshold (KEDA's `value > activation`). */
export function isTriggerActive(trigger: PrometheusTrigger, value: number): boolean {
  return value > trigger.activationThreshold;
}

function required(metadata: Record<string, string>, key: string, at: string): string {
  const value = metadata[key];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new KedaInvalidTriggerError(
      `${at}.metadata.${key}`,
      value === undefined ? 'missing' : `got ${JSON.stringify(value)}`,
      'a non-empty string',
    );
  }
  return value;
}

/** strconv.ParseFloat: KEDA takes threshold values as strings ("25", "0.5"). */
function float(metadata: Record<string, string>, key: string, at: string, fallback: number | undefined): number {
  const raw = metadata[key];
  if (raw === undefined || raw === '') {
    if (fallback !== undefined) return fallback;
    throw new KedaInvalidTriggerError(`${at}.metadata.${key}`, 'missing', 'a number written as a string, e.g. "25"');
  }
  const text = String(raw).trim();
  const value = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value)) {
    throw new KedaInvalidTriggerError(
      `${at}.metadata.${key}`,
      `got ${JSON.stringify(raw)}`,
      'a number written as a string, e.g. "25"',
    );
  }
  return value;
}

/** strconv.ParseBool's accepted spellings. */
function bool(metadata: Record<string, string>, key: string, at: string, fallback: boolean): boolean {
  const raw = metadata[key];
  if (raw === undefined || raw === '') return fallback;
  const text = String(raw);
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  throw new KedaInvalidTriggerError(`${at}.metadata.${key}`, `got ${JSON.stringify(raw)}`, 'true or false');
}
