import { causeMessage } from './outcome.js';
import { fmt } from '../format.js';
import type { CalibrationAnalysis, ThresholdChange } from '../types.js';

/**
 * The combined report of a many-target execution: one line per target (its outcome, capacity, thresholds, whether
 * they were applied, why it failed, where its own report is), built from what each child execution returned.
 */

/** What one target's child execution gave back (the Map item's output, statemachines/calibration.asl.json). */
export interface BatchItemResult {
  index: number;
  name: string;
  target: string;
  input: { target?: { cluster?: string; region?: string; namespace?: string; deployment?: string } };
  /** Present when the child succeeded: the CalibrateTarget state's ResultSelector. */
  outcome?: {
    executionArn: string;
    analysis: Pick<CalibrationAnalysis, 'capacityRps' | 'thresholds' | 'saturation'> | null;
    change: Pick<ThresholdChange, 'applied' | 'next' | 'scaledObject'> | null;
    report: { reportLocation: string; chartLocation: string } | null;
  };
  /** Present when it failed: the Catch's `{Error, Cause}`. */
  failure?: { Error?: string; Cause?: string };
}

/** One target in the combined report. */
export interface BatchTargetReport {
  index: number;
  target: { cluster: string | null; region: string | null; namespace: string | null; deployment: string | null };
  /** The child execution's name (its own report, lease and history record carry it). */
  execution: string;
  outcome: 'succeeded' | 'failed';
  /** One replica's capacity in requests/s; null when the target failed or none was derived. */
  capacityRps: number | null;
  thresholds: { queueDepthPerPod: number; queueActivation: number; p95LatencySeconds: number } | null;
  /** true: written into the ScaledObject; false: dry run; null: no change planned (or the target failed). */
  applied: boolean | null;
  /** The named error and its cause, when the target failed. */
  failure: { error: string; cause: string } | null;
  /** Where the target's own report and chart are; null when it failed before storing one. */
  report: { reportLocation: string; chartLocation: string } | null;
}

/** `succeeded`: every target; `partial`: some; `failed`: none. Also the notification's `status` attribute. */
export type BatchStatus = 'succeeded' | 'partial' | 'failed';

export interface BatchReport {
  version: 1;
  kind: 'batch';
  execution: { id: string; name: string; startTime: string };
  maxConcurrency: number;
  status: BatchStatus;
  targets: BatchTargetReport[];
}

/** The combined report from the Map's results, in list order whatever order the targets finished in. */
export function buildBatchReport(
  execution: BatchReport['execution'],
  maxConcurrency: number,
  results: readonly BatchItemResult[],
): BatchReport {
  const targets = [...results].sort((a, b) => a.index - b.index).map(targetReport);
  const succeeded = targets.filter((t) => t.outcome === 'succeeded').length;
  const status: BatchStatus = succeeded === targets.length ? 'succeeded' : succeeded === 0 ? 'failed' : 'partial';
  return { version: 1, kind: 'batch', execution, maxConcurrency, status, targets };
}

function targetReport(result: BatchItemResult): BatchTargetReport {
  const t = result.input.target ?? {};
  const target = {
    cluster: t.cluster ?? null,
    region: t.region ?? null,
    namespace: t.namespace ?? null,
    deployment: t.deployment ?? null,
  };
  const base = { index: result.index, target, execution: result.name };
  if (result.outcome === undefined)
    return {
      ...base,
      outcome: 'failed',
      capacityRps: null,
      thresholds: null,
      applied: null,
      failure: childFailure(result.failure),
      report: null,
    };
  const { analysis, change, report } = result.outcome;
  const thresholds = analysis?.thresholds ?? null;
  return {
    ...base,
    outcome: 'succeeded',
    capacityRps: analysis?.capacityRps?.value ?? null,
    thresholds:
      thresholds === null
        ? null
        : {
            queueDepthPerPod: thresholds.queueDepthPerPod.value,
            queueActivation: thresholds.queueActivation.value,
            p95LatencySeconds: thresholds.p95LatencySeconds.value,
          },
    applied: change === null ? null : change.applied,
    failure: null,
    report: report === null ? null : { reportLocation: report.reportLocation, chartLocation: report.chartLocation },
  };
}

/**
 * The child's own error. A failed `startExecution.sync` fails the task with `States.TaskFailed` and, as its Cause,
 * the child's DescribeExecution answer as JSON, whose `Error` and `Cause` are the child's (a Lambda's Cause is JSON
 * again, whose errorMessage is the message). Anything else (the child could not start) is kept as it came.
 */
export function childFailure(failure: BatchItemResult['failure']): { error: string; cause: string } {
  const error = failure?.Error ?? 'States.Runtime';
  const cause = failure?.Cause ?? '';
  try {
    const described = JSON.parse(cause) as { Error?: unknown; Cause?: unknown; Status?: unknown };
    if (typeof described.Error === 'string')
      return {
        error: described.Error,
        cause: typeof described.Cause === 'string' ? causeMessage(described.Cause) : '',
      };
    if (typeof described.Status === 'string')
      return { error: `Execution${described.Status.charAt(0)}${described.Status.slice(1).toLowerCase()}`, cause };
  } catch {
    // Not JSON: the cause is the message itself.
  }
  return { error, cause: causeMessage(cause) };
}

/** The notification and CLI summary: one line per target, then where the combined report is. */
export function renderBatchSummary(report: BatchReport, location: string): string {
  const succeeded = report.targets.filter((t) => t.outcome === 'succeeded').length;
  const lines = [
    `Calibration of ${report.targets.length} target(s), execution ${report.execution.name}, at most ` +
      `${report.maxConcurrency} at once: ${succeeded} succeeded, ${report.targets.length - succeeded} failed`,
    ...report.targets.map((t) => `  ${t.index + 1}. ${targetLine(t)}`),
    `Combined report: ${location}`,
  ];
  return lines.join('\n');
}

function targetLine(t: BatchTargetReport): string {
  const name = `${t.target.namespace ?? '?'}/${t.target.deployment ?? '?'} (${t.target.cluster ?? '?'})`;
  if (t.outcome === 'failed')
    return `${name}: FAILED ${t.failure?.error ?? ''}: ${(t.failure?.cause ?? '').split('\n')[0] ?? ''} (execution ${t.execution})`;
  const capacity = t.capacityRps === null ? 'capacity not derived' : `capacity ${fmt(t.capacityRps)} req/s`;
  const thresholds =
    t.thresholds === null
      ? 'no thresholds'
      : `queue ${fmt(t.thresholds.queueDepthPerPod)}/Pod (activation ${fmt(t.thresholds.queueActivation)}), ` +
        `p95 guardrail ${fmt(t.thresholds.p95LatencySeconds)} s`;
  const applied = t.applied === null ? 'no ScaledObject change' : t.applied ? 'applied' : 'dry run';
  const report = t.report === null ? '' : `; report ${t.report.reportLocation}`;
  return `${name}: succeeded, ${capacity}, ${thresholds}, ${applied}${report}`;
}
