import { PUT_METRIC_DATA_LIMITS, STANDARD_UNITS } from './limits.js';
import type { Datum } from './types.js';

// Printable ASCII (32-126): CloudWatch refuses non-ASCII and control characters in names and dimension values.
const PRINTABLE_ASCII = /^[\x20-\x7E]*$/;
const NON_WHITESPACE = /\S/;
const UNITS: ReadonlySet<string> = new Set(STANDARD_UNITS);

/** Why CloudWatch would refuse this namespace, or undefined when it is fine. */
export function namespaceProblem(namespace: string): string | undefined {
  const base = nameProblem(namespace);
  if (base !== undefined) return base;
  if (namespace.startsWith(':')) return 'must not start with ":"';
  if (namespace.startsWith(PUT_METRIC_DATA_LIMITS.reservedNamespacePrefix))
    return `must not start with "${PUT_METRIC_DATA_LIMITS.reservedNamespacePrefix}" (reserved for AWS services)`;
  return undefined;
}

/** Why CloudWatch would refuse this metric name, or undefined. */
export function metricNameProblem(name: string): string | undefined {
  return nameProblem(name);
}

/** Why CloudWatch would refuse this dimension name, or undefined. */
export function dimensionNameProblem(name: string): string | undefined {
  const base = nameProblem(name);
  if (base !== undefined) return base;
  return name.startsWith(':') ? 'must not start with ":"' : undefined;
}

/** Why CloudWatch would refuse this dimension value, or undefined. */
export function dimensionValueProblem(value: string): string | undefined {
  return textProblem(value, PUT_METRIC_DATA_LIMITS.maxDimensionValueLength);
}

/** Why CloudWatch would refuse this value (NaN, ±Infinity, outside ±2^360, nonzero below 2^-360), or undefined. */
export function valueProblem(value: number): string | undefined {
  if (Number.isNaN(value)) return 'value is NaN, which CloudWatch does not accept';
  if (!Number.isFinite(value)) return `value is ${value > 0 ? '+' : '-'}Infinity, which CloudWatch does not accept`;
  const magnitude = Math.abs(value);
  if (
    magnitude > PUT_METRIC_DATA_LIMITS.maxAbsValue ||
    (magnitude > 0 && magnitude < PUT_METRIC_DATA_LIMITS.minAbsNonZeroValue)
  )
    return `value ${value} is outside the range CloudWatch accepts (magnitude 2^-360 to 2^360, or 0)`;
  return undefined;
}

/** Why CloudWatch would refuse this unit, or undefined. */
export function unitProblem(unit: string): string | undefined {
  return UNITS.has(unit) ? undefined : `unit ${JSON.stringify(unit)} is not a CloudWatch StandardUnit`;
}

/**
 * Why CloudWatch would refuse this datum, naming the field, or undefined when it is fine. CloudWatch refuses a whole
 * request for one bad datum, so the sink checks each one before sending.
 */
export function datumProblem(datum: Datum): string | undefined {
  const name = metricNameProblem(datum.MetricName);
  if (name !== undefined) return `MetricName ${JSON.stringify(datum.MetricName)}: ${name}`;
  const value = valueProblem(datum.Value);
  if (value !== undefined) return value;
  const unit = unitProblem(datum.Unit);
  if (unit !== undefined) return unit;
  if (!(datum.Timestamp instanceof Date) || Number.isNaN(datum.Timestamp.getTime()))
    return 'Timestamp is not a valid date';
  if (datum.Dimensions.length > PUT_METRIC_DATA_LIMITS.maxDimensionsPerDatum)
    return `has ${datum.Dimensions.length} dimensions; CloudWatch accepts at most ${PUT_METRIC_DATA_LIMITS.maxDimensionsPerDatum}`;
  const seen = new Set<string>();
  for (const dimension of datum.Dimensions) {
    const dimName = dimensionNameProblem(dimension.Name);
    if (dimName !== undefined) return `dimension name ${JSON.stringify(dimension.Name)}: ${dimName}`;
    if (seen.has(dimension.Name)) return `dimension ${dimension.Name} appears twice`;
    seen.add(dimension.Name);
    const dimValue = dimensionValueProblem(dimension.Value);
    if (dimValue !== undefined) return `dimension ${dimension.Name} value ${abbreviate(dimension.Value)}: ${dimValue}`;
  }
  return undefined;
}

function nameProblem(name: string): string | undefined {
  return textProblem(name, PUT_METRIC_DATA_LIMITS.maxNameLength);
}

function textProblem(text: string, maxLength: number): string | undefined {
  if (text.length === 0) return 'must not be empty';
  if (text.length > maxLength) return `is ${text.length} characters long; at most ${maxLength} are accepted`;
  if (!PRINTABLE_ASCII.test(text))
    return 'must contain only printable ASCII characters (no control or non-ASCII characters)';
  if (!NON_WHITESPACE.test(text)) return 'must contain at least one non-whitespace character';
  return undefined;
}

function abbreviate(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}
