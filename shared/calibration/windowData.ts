/**
 * Whether AMP holds a step's whole window yet. On AWS samples reach AMP by remote write, up to about a minute after
 * they were scraped; a window measured before they arrive reads a partial window (a completion rate too low, a
 * saturated verdict from missing data). So a step is judged only once AMP holds a sample of every serving Pod past
 * the window's end, and a step whose data never arrives fails with a named error instead of being judged.
 */
import { guardSingleValue, VALUE_DOMAIN, type MetricsSource } from '../metrics/index.js';
import { CalibrationStepDataMissingError } from './errors.js';
import { fmt } from './format.js';
import type { CalibrationInput } from './input.js';
import { calibrationTarget, latestSampleQuery } from './stepQueries.js';

/** One look at AMP for a window's data. */
export interface WindowDataLook {
  /** `in`: AMP holds samples past the window's end; `waiting`: not yet (look again). */
  status: 'in' | 'waiting';
  /** The newest sample AMP holds of the Pod furthest behind (epoch ms), or null when it holds none. */
  latestSampleMs: number | null;
  /** Seconds from the window's end until this look. */
  waitedSeconds: number;
  reason: string;
}

export interface WindowDataContext {
  windowEndMs: number;
  nowMs: number;
  /** When the first look at this window happened (epoch ms): the wait's bound starts there. */
  firstLookMs: number;
  /** `input.ingestion.timeoutSeconds`. */
  timeoutSeconds: number;
  /** Names the step in the error. */
  stepLabel: string;
}

/**
 * Decides from the newest sample AMP holds; throws CalibrationStepDataMissingError once the wait has lasted
 * `timeoutSeconds` without the window's end being covered.
 */
export function judgeWindowData(latestSampleMs: number | null, context: WindowDataContext): WindowDataLook {
  const { windowEndMs, nowMs } = context;
  const waitedSeconds = Math.max(0, (nowMs - windowEndMs) / 1000);
  const held =
    latestSampleMs === null
      ? 'AMP holds no sample of the target'
      : `AMP's newest sample of the target ${describeAge(latestSampleMs, windowEndMs)}`;
  if (latestSampleMs !== null && latestSampleMs >= windowEndMs)
    return {
      status: 'in',
      latestSampleMs,
      waitedSeconds,
      reason: `AMP held samples past the window's end ${fmt(waitedSeconds, 0)} s after it (${held})`,
    };
  const lookingSeconds = Math.max(0, (nowMs - context.firstLookMs) / 1000);
  if (lookingSeconds >= context.timeoutSeconds)
    throw new CalibrationStepDataMissingError(
      `${context.stepLabel}: AMP did not hold the window's data within ingestion.timeoutSeconds ` +
        `(${context.timeoutSeconds} s from the first look; ${held}); the step is not judged on a partial ` +
        'window. Check the remote write from the cluster to AMP (its queue, its errors) or raise ingestion.timeoutSeconds',
    );
  return {
    status: 'waiting',
    latestSampleMs,
    waitedSeconds,
    reason: `waiting for AMP to hold the window's end (${held})`,
  };
}

/**
 * One look: the newest sample AMP holds of the target's series at `nowMs`, judged against the window. The answer
 * (one series, a Unix time) passes the shared AMP answer guard: several series, a negative time or ±Inf is a named
 * error, never a time to judge by.
 */
export async function lookForWindowData(
  source: MetricsSource,
  input: CalibrationInput,
  context: WindowDataContext,
): Promise<WindowDataLook> {
  const query = latestSampleQuery(calibrationTarget(input));
  const seconds = guardSingleValue(
    await source.instant(query, { timeMs: context.nowMs }),
    VALUE_DOMAIN.timestamp,
    query,
  );
  return judgeWindowData(seconds === undefined ? null : Math.round(seconds * 1000), context);
}

function describeAge(sampleMs: number, windowEndMs: number): string {
  const seconds = (sampleMs - windowEndMs) / 1000;
  return seconds >= 0
    ? `is ${fmt(seconds, 1)} s past the window's end`
    : `is ${fmt(-seconds, 1)} s before the window's end`;
}
