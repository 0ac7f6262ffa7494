/**
 * Prometheus text format 0.0.4 as Python's prometheus_client writes it (`exposition.generate_latest`), so the
 * twin's `/metrics` reads like a real vLLM server's: labels sorted by name, floats in Python's repr
 * (`1.0`, `0.4375`), large values as `1.78873392432e+09`, `_created` families after counters and histograms.
 */

/** Python's `repr(float)`: shortest round-trip digits, `.0` on integers, exponent below 1e-4 and from 1e16. */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Number.POSITIVE_INFINITY) return 'inf';
  if (value === Number.NEGATIVE_INFINITY) return '-inf';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  // toExponential() without an argument gives the shortest digits that round-trip, like Python's repr.
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (exponent < -4 || exponent >= 16) {
    const rest = digits.slice(1);
    const exponentSign = exponent < 0 ? '-' : '+';
    return `${sign}${digits[0]}${rest ? `.${rest}` : ''}e${exponentSign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const integerPart = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1);
  return `${sign}${integerPart}.${fraction || '0'}`;
}

/** prometheus_client's `floatToGoString`: the sample-value and `le` rendering (`+Inf`, `1.0`, `1.2335e+06`). */
export function formatValue(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  if (Number.isNaN(value)) return 'NaN';
  const text = pythonFloatRepr(value);
  const dot = text.indexOf('.');
  if (value > 0 && dot > 6) {
    // Same quirk as prometheus_client: the exponent is always written as "e+0" followed by the digit count - 1.
    const mantissa = `${text[0]}.${text.slice(1, dot)}${text.slice(dot + 1)}`.replace(/[0.]+$/, '');
    return `${mantissa}e+0${dot - 1}`;
  }
  return text;
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** `{a="1",b="2"}` with names sorted (prometheus_client sorts), or '' for no labels. */
export function formatLabels(labels: Readonly<Record<string, string>>): string {
  const names = Object.keys(labels).sort();
  if (names.length === 0) return '';
  return `{${names.map((name) => `${name}="${escapeLabelValue(labels[name] ?? '')}"`).join(',')}}`;
}

/** One exposition line: `name{labels} value`. */
export function formatSample(name: string, labels: Readonly<Record<string, string>>, value: number): string {
  return `${name}${formatLabels(labels)} ${formatValue(value)}`;
}

/** The `# HELP` and `# TYPE` header of a family. */
export function formatHeader(name: string, type: 'gauge' | 'counter' | 'histogram', help: string): string[] {
  return [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`];
}
