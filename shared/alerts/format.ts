import type { AlertValueUnit } from './types.js';

/**
 * Value formatting for alert texts. The evaluator formats in TypeScript; the exported rule files format the same
 * texts with Prometheus's template functions (`humanize`, `humanizePercentage`, `humanizeDuration`). The functions
 * here port those (prometheus/template/template.go, Go's `%.4g` and `%v`), so a summary reads the same whether the
 * product's evaluator or Prometheus/AMP sent it; the promtool tests check that they agree.
 */

const SMALL_PREFIXES = ['m', 'u', 'n', 'p', 'f', 'a', 'z', 'y'] as const;
const LARGE_PREFIXES = ['k', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'] as const;

/** Go's exponent form: at least two digits (`e+06`, `e-07`). */
function goExponent(exponent: number): string {
  const sign = exponent < 0 ? '-' : '+';
  return `e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** Splits `toExponential` output into its digits (no dot) and its decimal exponent. */
function decompose(exponential: string): { digits: string; exponent: number; negative: boolean } {
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(exponential);
  if (!match) throw new Error(`unexpected number format ${exponential}`);
  return {
    negative: match[1] === '-',
    digits: `${match[2] ?? ''}${match[3] ?? ''}`,
    exponent: Number(match[4]),
  };
}

/**
 * `value` rounded to `precision` significant digits the way Go's strconv does: to nearest, and an exact tie to even
 * (JavaScript's `toExponential` rounds a tie up). A double's decimal expansion that reads as a tie in its first 100
 * digits is an exact tie: doubles are 2^-52 apart relative to their size, far coarser than 10^-99.
 */
function roundToPrecision(value: number, precision: number): { digits: string; exponent: number; negative: boolean } {
  const exact = decompose(value.toExponential(99));
  const next = exact.digits[precision];
  const tie = next === '5' && /^0*$/.test(exact.digits.slice(precision + 1));
  if (!tie) return decompose(value.toExponential(precision - 1));
  const kept = exact.digits.slice(0, precision);
  const odd = Number(kept.at(-1) ?? '0') % 2 === 1;
  const rounded = (BigInt(kept) + (odd ? 1n : 0n)).toString();
  // 9.9995 → 10.00: one more digit means the exponent grows by one.
  return rounded.length > precision
    ? { digits: rounded.slice(0, precision), exponent: exact.exponent + 1, negative: exact.negative }
    : { digits: rounded, exponent: exact.exponent, negative: exact.negative };
}

/** Go's `%g` with the given significant digits (trailing zeros removed), or the shortest form when undefined. */
function goG(value: number, precision: number | undefined): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const {
    digits: raw,
    exponent,
    negative,
  } = precision === undefined ? decompose(value.toExponential()) : roundToPrecision(value, precision);
  const digits = raw.replace(/0+$/, '') || '0';
  // strconv.FormatFloat 'g': exponent form below 1e-4 or from the precision on (6 for the shortest form).
  const limit = precision ?? 6;
  let body: string;
  if (exponent < -4 || exponent >= limit) {
    body = `${digits[0] ?? '0'}${digits.length > 1 ? `.${digits.slice(1)}` : ''}${goExponent(exponent)}`;
  } else if (exponent < 0) {
    body = `0.${'0'.repeat(-exponent - 1)}${digits}`;
  } else if (digits.length <= exponent + 1) {
    body = digits + '0'.repeat(exponent + 1 - digits.length);
  } else {
    body = `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
  }
  return negative ? `-${body}` : body;
}

/** Go's `fmt.Sprintf("%.4g", v)`. */
export function goFormat4g(value: number): string {
  return goG(value, 4);
}

/** Go's `fmt.Sprint(v)` for a float64: what `{{ $value }}` prints in a Prometheus template. */
export function goFormatFloat(value: number): string {
  return goG(value, undefined);
}

/** Prometheus's `humanize`: SI prefixes, 4 significant digits (`1234` → `1.234k`, `0.05` → `50m`). */
export function humanize(value: number): string {
  if (value === 0 || !Number.isFinite(value)) return goFormat4g(value);
  let v = value;
  let prefix = '';
  if (Math.abs(v) >= 1) {
    for (const p of LARGE_PREFIXES) {
      if (Math.abs(v) < 1000) break;
      prefix = p;
      v /= 1000;
    }
    return `${goFormat4g(v)}${prefix}`;
  }
  for (const p of SMALL_PREFIXES) {
    if (Math.abs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return `${goFormat4g(v)}${prefix}`;
}

/** Prometheus's `humanizePercentage`: a 0-1 fraction as a percentage (`0.9712` → `97.12%`). */
export function humanizePercentage(value: number): string {
  return `${goFormat4g(value * 100)}%`;
}

/** Prometheus's `humanizeDuration`: seconds as `6.5s`, `1m 30s`, `2h 0m 5s`, `950ms`. */
export function humanizeDuration(value: number): string {
  if (!Number.isFinite(value)) return goFormat4g(value);
  if (value === 0) return `${goFormat4g(value)}s`;
  if (Math.abs(value) >= 1) {
    const sign = value < 0 ? '-' : '';
    const v = Math.abs(value);
    const whole = Math.trunc(v);
    const seconds = whole % 60;
    const minutes = Math.trunc(whole / 60) % 60;
    const hours = Math.trunc(whole / 3600) % 24;
    const days = Math.trunc(whole / 86_400);
    if (days !== 0) return `${sign}${days}d ${hours}h ${minutes}m ${seconds}s`;
    if (hours !== 0) return `${sign}${hours}h ${minutes}m ${seconds}s`;
    if (minutes !== 0) return `${sign}${minutes}m ${seconds}s`;
    return `${sign}${goFormat4g(v)}s`;
  }
  let v = value;
  let prefix = '';
  for (const p of SMALL_PREFIXES) {
    if (Math.abs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return `${goFormat4g(v)}${prefix}s`;
}

/** How each unit reads: the Prometheus template function and its TypeScript port, plus a suffix. */
const UNIT_FORMATS = {
  requests: { template: 'humanize', format: humanize, suffix: '' },
  seconds: { template: 'humanizeDuration', format: humanizeDuration, suffix: '' },
  ratio: { template: 'humanizePercentage', format: humanizePercentage, suffix: '' },
  'per-second': { template: 'humanize', format: humanize, suffix: '/s' },
} as const satisfies Record<AlertValueUnit, { template: string; format: (value: number) => string; suffix: string }>;

/** A rule's value as a person reads it: `73`, `6.5s`, `97.12%`, `6/s`. */
export function formatAlertValue(value: number, unit: AlertValueUnit): string {
  const { format, suffix } = UNIT_FORMATS[unit];
  return `${format(value)}${suffix}`;
}

/** The Prometheus template that renders an alert's `$value` exactly as `formatAlertValue` does. */
export function alertValueTemplate(unit: AlertValueUnit): string {
  const { template, suffix } = UNIT_FORMATS[unit];
  return `{{ $value | ${template} }}${suffix}`;
}

/** Seconds as a PromQL/Prometheus duration: `120` → `2m`, `90` → `1m30s`, `14400` → `4h`, `0` → `0s`. */
export function formatDurationSeconds(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 0) throw new RangeError(`expected whole seconds >= 0, got ${seconds}`);
  if (seconds === 0) return '0s';
  const parts: Array<[number, string]> = [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'm'],
    [1, 's'],
  ];
  let rest = seconds;
  let out = '';
  for (const [size, unit] of parts) {
    const count = Math.floor(rest / size);
    if (count > 0) out += `${count}${unit}`;
    rest -= count * size;
  }
  return out;
}
