/**
 * Prometheus text-format helpers that print values the way the real exporters do: dcgm-exporter formats with Go's
 * `%d` / `%f`, the kubelet's cAdvisor endpoint with client_golang's `strconv.FormatFloat(v, 'g', -1, 64)`.
 */

/** One label pair; an array of them keeps the exporter's label order. */
export type LabelPair = readonly [name: string, value: string];

/** Escapes a label value per the exposition format (backslash, double quote, newline). */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** Renders `{a="1",b="2"}` in the given order (no spaces, like dcgm-exporter and client_golang). */
export function renderLabels(labels: readonly LabelPair[]): string {
  if (labels.length === 0) return '';
  return `{${labels.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}`;
}

/** Go's `%d` for a value the exporter holds as int64 (the twin's value is rounded to the nearest integer). */
export function formatInt(value: number): string {
  const rounded = Math.round(value);
  return Object.is(rounded, -0) ? '0' : rounded.toFixed(0);
}

/** Go's `%f`: six decimals, no exponent. */
export function formatDouble(value: number): string {
  const text = value.toFixed(6);
  return text === '-0.000000' ? '0.000000' : text;
}

/**
 * Go's `strconv.FormatFloat(v, 'g', -1, 64)`, which client_golang's text encoder uses: the shortest digits that
 * round-trip, in exponent form when the decimal exponent is < -4 or >= 6 (Go `strconv/ftoa.go`: for the shortest
 * precision `eprec = 6`), with at least two exponent digits (`3.4869248e+07`).
 */
export function formatGoFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  // toExponential() without an argument gives the shortest round-trip digits, like Go's shortest formatting.
  const [mantissa = '0', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(value);
}
