import type { LabelPair } from './exposition.js';

/** One sample line of a text exposition, with its labels in the order they were written and the raw value text. */
export interface ExpositionSample {
  name: string;
  labels: LabelPair[];
  /** The value exactly as printed (so tests can check `%d` vs `%f`). */
  valueText: string;
  value: number;
  timestampMs?: number;
}

export interface ParsedExposition {
  /** `# TYPE` and `# HELP` per metric family. */
  families: Map<string, { type?: string; help?: string }>;
  samples: ExpositionSample[];
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

/**
 * Parses the Prometheus text format as the twin's exporters write it, keeping label order (which Prometheus itself
 * discards) so tests can compare it with the real exporters'. Throws on a line it cannot read.
 */
export function parseExposition(text: string): ParsedExposition {
  const families = new Map<string, { type?: string; help?: string }>();
  const samples: ExpositionSample[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name = '', rest = ''] = meta;
      const family = families.get(name) ?? {};
      if (kind === 'TYPE') family.type = rest;
      else family.help = rest;
      families.set(name, family);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`line ${index + 1} is not a sample: ${line}`);
    const [, name = '', , labelText = '', valueText = '', timestamp] = match;
    const labels: LabelPair[] = [];
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < labelText.length) {
      const label = LABEL.exec(labelText);
      if (!label) throw new Error(`line ${index + 1} has malformed labels: ${labelText}`);
      labels.push([label[1] ?? '', (label[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))]);
    }
    samples.push({
      name,
      labels,
      valueText,
      value: valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : Number(valueText),
      ...(timestamp !== undefined ? { timestampMs: Number(timestamp) } : {}),
    });
  }
  return { families, samples };
}
