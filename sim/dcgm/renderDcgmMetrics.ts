import type { GpuReading } from './DcgmGpu.js';
import { formatDouble, formatInt, type LabelPair, renderLabels } from './exposition.js';
import { DCGM_DEFAULT_FIELDS, DCGM_ECC_FIELDS } from './fields.js';
import { DCGM } from '../../shared/metrics/index.js';

/**
 * Renders dcgm-exporter's `/metrics` body for the GPUs of one node: per field `# HELP`, `# TYPE`, then one line per
 * GPU. Labels follow render_metrics.go: the GPU's identity labels, then the attributes sorted by name (`container`,
 * `namespace`, `pod` when a Pod uses the GPU; `err_code`, `err_msg` on XID errors). A field a GPU does not report is
 * skipped, as the exporter skips blank values. Families come in the counters file's order (the real exporter's
 * order varies between scrapes; no consumer may rely on it).
 */
export function renderDcgmMetrics(readings: readonly GpuReading[]): string {
  const lines: string[] = [];
  for (const field of [...DCGM_DEFAULT_FIELDS, ...DCGM_ECC_FIELDS]) {
    const samples = readings.filter((reading) => reading.values.has(field.name));
    if (samples.length === 0) continue;
    lines.push(`# HELP ${field.name} ${field.help}`, `# TYPE ${field.name} ${field.type}`);
    for (const reading of samples) {
      const value = reading.values.get(field.name) ?? 0;
      const text = field.format === 'int' ? formatInt(value) : formatDouble(value);
      lines.push(`${field.name}${renderLabels(seriesLabels(reading, field.name))} ${text}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** The labels of one series, in the exporter's order. */
function seriesLabels(reading: GpuReading, fieldName: string): LabelPair[] {
  const attributes: LabelPair[] = [];
  if (reading.pod) {
    attributes.push(
      ['container', reading.pod.container],
      ['namespace', reading.pod.namespace],
      ['pod', reading.pod.pod],
    );
  }
  if (fieldName === DCGM.xidErrors) {
    attributes.push(['err_code', String(reading.xid.code)], ['err_msg', reading.xid.message]);
  }
  attributes.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return [...reading.identity, ...attributes];
}
