import { WhatIfTraceInvalidError } from './errors.js';

/** A request-rate trace at one-second steps: `rps[i]` is the rate offered during second i. */
export interface RateTrace {
  /** Where it came from, for messages and the report (a file name, `amp`). */
  source: string;
  rps: Float64Array;
}

const ACCEPTED_HEADER = 'a header `seconds,rps` or `timestamp,rps` (ISO 8601 times)';

/**
 * Parses a CSV trace: a header `seconds,rps` (seconds since any origin) or `timestamp,rps` (ISO 8601), then one row
 * per sample at any step, times strictly increasing. Each sample's rate holds until the next sample (a rate read
 * over a minute is that minute's rate); the last holds for the step before it. Blank lines and `#` comments are
 * skipped. Fails naming the line.
 */
export function parseTraceCsv(text: string, source: string): RateTrace {
  const lines = text.split(/\r?\n/).map((line, index) => ({ line: line.trim(), number: index + 1 }));
  const rows = lines.filter(({ line }) => line !== '' && !line.startsWith('#'));
  const [header, ...data] = rows;
  if (header === undefined) throw new WhatIfTraceInvalidError(source, '', 'the file is empty', ACCEPTED_HEADER);
  const columns = header.line.split(',').map((cell) => cell.trim().toLowerCase());
  const timeKind = columns[0];
  if (columns.length !== 2 || columns[1] !== 'rps' || (timeKind !== 'seconds' && timeKind !== 'timestamp')) {
    throw new WhatIfTraceInvalidError(
      source,
      `line ${header.number}`,
      `header ${JSON.stringify(header.line)}`,
      ACCEPTED_HEADER,
    );
  }
  if (data.length === 0) throw new WhatIfTraceInvalidError(source, '', 'no rows after the header', 'at least one row');
  const samples = data.map(({ line, number }) => {
    const cells = line.split(',').map((cell) => cell.trim());
    const where = `line ${number}`;
    if (cells.length !== 2)
      throw new WhatIfTraceInvalidError(
        source,
        where,
        `${cells.length} cells in ${JSON.stringify(line)}`,
        `2 (${timeKind},rps)`,
      );
    const [timeCell = '', rateCell = ''] = cells;
    const t = timeKind === 'seconds' ? Number(timeCell) : Date.parse(timeCell) / 1000;
    if (timeCell === '' || !Number.isFinite(t))
      throw new WhatIfTraceInvalidError(
        source,
        where,
        `${timeKind} ${JSON.stringify(timeCell)} is not ${timeKind === 'seconds' ? 'a number' : 'an ISO 8601 time'}`,
        timeKind === 'seconds' ? 'seconds as a number, e.g. 60' : 'e.g. 2026-12-01T08:00:00Z',
      );
    const rps = Number(rateCell);
    if (rateCell === '' || !Number.isFinite(rps) || rps < 0)
      throw new WhatIfTraceInvalidError(
        source,
        where,
        `rps ${JSON.stringify(rateCell)}`,
        'a number of requests per second >= 0',
      );
    return { t, rps, where };
  });
  for (let i = 1; i < samples.length; i++) {
    const previous = samples[i - 1];
    const sample = samples[i];
    if (previous !== undefined && sample !== undefined && !(sample.t > previous.t))
      throw new WhatIfTraceInvalidError(
        source,
        sample.where,
        `time ${sample.t} is not after the previous row's`,
        'times strictly increasing',
      );
  }
  return { source, rps: holdToSeconds(samples) };
}

/**
 * Builds a trace from samples at a known step (an AMP range query), each rate held until the next sample and the
 * last for one step.
 */
export function traceFromSamples(
  samples: ReadonlyArray<{ t: number; rps: number }>,
  source: string,
  stepSeconds: number,
): RateTrace {
  return { source, rps: holdToSeconds(samples, stepSeconds) };
}

/** Per-second rates; the last sample holds for `lastStepSeconds`, else for the step before it (1 s if alone). */
function holdToSeconds(samples: ReadonlyArray<{ t: number; rps: number }>, lastStepSeconds?: number): Float64Array {
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (first === undefined || last === undefined) return new Float64Array(0);
  const beforeLast = samples[samples.length - 2];
  const lastStep = lastStepSeconds ?? (beforeLast === undefined ? 1 : last.t - beforeLast.t);
  const seconds = Math.max(1, Math.round(last.t - first.t + lastStep));
  const rps = new Float64Array(seconds);
  let index = 0;
  for (let s = 0; s < seconds; s++) {
    while (index + 1 < samples.length && (samples[index + 1]?.t ?? Infinity) - first.t <= s) index += 1;
    rps[s] = samples[index]?.rps ?? 0;
  }
  return rps;
}
