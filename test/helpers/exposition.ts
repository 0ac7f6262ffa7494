/**
 * A small reader of the Prometheus text exposition format 0.0.4, written for the tests so that the oracle checks of
 * the twin's `/metrics` do not lean on the twin's own parser. It keeps what the checks need: `# TYPE` per family,
 * and every sample with its labels and the raw text of its value and `le` label.
 */

/** One sample line. */
export interface TextSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed `/metrics` body. */
export interface TextExposition {
  /** `# TYPE` per family name. */
  types: Map<string, string>;
  samples: TextSample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL_PAIR = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;

/** Parses a text-format body; throws naming the line it cannot read. */
export function parseTextExposition(text: string): TextExposition {
  const types = new Map<string, string>();
  const samples: TextSample[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1] ?? '', type[2] ?? '');
      return;
    }
    if (line.startsWith('#')) return;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`/metrics line ${index + 1} is not a sample: ${line}`);
    const [, name = '', labelText = '', valueText = ''] = match;
    samples.push({ name, labels: parseLabels(labelText, index + 1), value: parseValue(valueText) });
  });
  return { types, samples };
}

function parseLabels(text: string, lineNumber: number): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL_PAIR.lastIndex = 0;
  while (LABEL_PAIR.lastIndex < text.length) {
    const pair = LABEL_PAIR.exec(text);
    if (!pair) throw new Error(`/metrics line ${lineNumber} has malformed labels: {${text}}`);
    labels[pair[1] ?? ''] = (pair[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/** A sample value or `le` bound as the text format writes it (`+Inf`, `NaN`, `1.0`, `1e+06`). */
export function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  return Number(text);
}

/** The samples of one series name (e.g. `vllm:e2e_request_latency_seconds_bucket`). */
export function samplesNamed(exposition: TextExposition, name: string): TextSample[] {
  return exposition.samples.filter((sample) => sample.name === name);
}

/** Every family or series name that appears, from `# TYPE` lines and samples. */
export function namesIn(exposition: TextExposition): Set<string> {
  return new Set([...exposition.types.keys(), ...exposition.samples.map((sample) => sample.name)]);
}
