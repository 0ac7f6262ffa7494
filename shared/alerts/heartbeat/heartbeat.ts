import type { Datum } from '../../cloudwatch/index.js';
import { TARGET_CYCLE_STATUS, type AlertCycleResult, type TargetCycleResult } from '../runAlertCycle.js';

/**
 * The evaluator's heartbeat (Alertmanager's Watchdog idea, turned around): every evaluation cycle records that it
 * ran and how it went, in two places that outlive the evaluator: a record in the alert state table (preflight check
 * 5 reads it) and a CloudWatch datum (the heartbeat alarm fires when the datums stop or say nothing worked).
 */

/** One target the last cycle could not evaluate (or notify), with the first reason. */
export interface HeartbeatTargetProblem {
  target: string;
  reason: string;
}

/** What one evaluation cycle records. */
export interface EvaluatorHeartbeat {
  /** When the cycle ended (epoch ms). */
  lastCycleAtMs: number;
  /** The time the cycle's queries evaluated at (epoch ms). */
  evaluationTimeMs: number;
  /** The evaluator's interval between cycles: preflight calls a heartbeat older than two of them missing. */
  intervalSeconds: number;
  /** The invocation that ran the cycle (the Lambda request id). */
  evaluatorId: string;
  /** Targets the cycle evaluated. */
  targets: number;
  /** True when no target failed: every target's rules ran (some may have failed, see `partialTargets`). */
  ok: boolean;
  /** Targets the cycle failed for (nothing evaluated or nothing sent), with the first reason each. */
  failedTargets: HeartbeatTargetProblem[];
  /** Targets evaluated in part (a rule or a send failed), with the first reason each. */
  partialTargets: HeartbeatTargetProblem[];
  /** The last cycle that was ok (epoch ms); null when none has been since the record was created. */
  lastOkAtMs: number | null;
}

/** What a cycle hands the store; `lastOkAtMs` is the store's to keep. */
export type HeartbeatBeat = Omit<EvaluatorHeartbeat, 'lastOkAtMs'>;

/** The heartbeat store port; adapter: DynamoDbHeartbeatStore (the alert state table, AWS and the twin's dynalite). */
export interface HeartbeatStore {
  /** Records a cycle; `stale` when a later cycle is already recorded (an overlapping invocation), which is kept. */
  record(beat: HeartbeatBeat): Promise<'recorded' | 'stale'>;
  /** The last recorded cycle, or undefined when the evaluator never recorded one. */
  read(signal?: AbortSignal): Promise<EvaluatorHeartbeat | undefined>;
}

/**
 * The CloudWatch metric of the heartbeat: one datum per cycle in the product's namespace, 1 when the cycle was ok and
 * 0 when a target failed, dimension `Stage`. The heartbeat alarm (infra/serverless/alarms.ts) sums it per minute.
 */
export const HEARTBEAT_METRIC = { name: 'EvaluatorCycles', dimension: 'Stage', unit: 'Count' } as const;

/** The heartbeat of a cycle that ended at `atMs` after evaluating at `evaluationTimeMs`. */
export function heartbeatOf(
  result: AlertCycleResult,
  options: { evaluationTimeMs: number; atMs: number; intervalSeconds: number },
): HeartbeatBeat {
  const failedTargets = result.targets.filter((t) => t.status === TARGET_CYCLE_STATUS.failed).map(problemOf);
  const partialTargets = result.targets.filter((t) => t.status === TARGET_CYCLE_STATUS.partial).map(problemOf);
  return {
    lastCycleAtMs: options.atMs,
    evaluationTimeMs: options.evaluationTimeMs,
    intervalSeconds: options.intervalSeconds,
    evaluatorId: result.evaluatorId,
    targets: result.targets.length,
    ok: failedTargets.length === 0,
    failedTargets,
    partialTargets,
  };
}

/** The CloudWatch datum of a heartbeat (see HEARTBEAT_METRIC). */
export function heartbeatDatum(beat: Pick<HeartbeatBeat, 'ok' | 'lastCycleAtMs'>, stage: string): Datum {
  return {
    MetricName: HEARTBEAT_METRIC.name,
    Unit: HEARTBEAT_METRIC.unit,
    Value: beat.ok ? 1 : 0,
    Timestamp: new Date(beat.lastCycleAtMs),
    Dimensions: [{ Name: HEARTBEAT_METRIC.dimension, Value: stage }],
  };
}

function problemOf(target: TargetCycleResult): HeartbeatTargetProblem {
  const first =
    target.problems[0] ??
    (target.ruleFailures[0] === undefined
      ? undefined
      : `${target.ruleFailures[0].alertname}: ${target.ruleFailures[0].error}`) ??
    (target.failed[0] === undefined
      ? undefined
      : `${target.failed[0].alertname} ${target.failed[0].status} not sent: ${target.failed[0].errorName}: ${target.failed[0].error}`);
  return { target: target.target, reason: first ?? target.status };
}

/**
 * The heartbeat alarm: fewer than one ok cycle in each of 3 consecutive minutes, no datum counting as none
 * (TreatMissingData breaching), so a stopped, crashing, throttled or blind evaluator pages within about 3-4 minutes,
 * while one late or failed invocation (a cold start, one AMP hiccup: 1 of the 4 cycles of a minute is enough) does
 * not.
 */
export const HEARTBEAT_ALARM = {
  statistic: 'Sum',
  periodSeconds: 60,
  evaluationPeriods: 3,
  datapointsToAlarm: 3,
  threshold: 1,
  comparisonOperator: 'LessThanThreshold',
  treatMissingData: 'breaching',
} as const;

/** What the heartbeat alarm needs to know about where it runs. */
export interface HeartbeatAlarmOptions<V> {
  alarmName: V;
  namespace: string;
  stage: string;
  /** The SNS topics its ALARM and OK actions publish to. */
  topicArns: readonly V[];
  /** A shorter period for the twin (10 or 30 s, CloudWatch's high-resolution periods); default HEARTBEAT_ALARM's. */
  periodSeconds?: number;
}

/**
 * The heartbeat alarm as PutMetricAlarm takes it, which is also the shape of an AWS::CloudWatch::Alarm's properties:
 * the stack (infra/serverless/alarms.ts) and the twin (PutMetricAlarm) define it from here.
 */
export function heartbeatAlarmProperties<V>(options: HeartbeatAlarmOptions<V>): Record<string, unknown> {
  const a = HEARTBEAT_ALARM;
  const periodSeconds = options.periodSeconds ?? a.periodSeconds;
  return {
    AlarmName: options.alarmName,
    AlarmDescription:
      `The alert evaluator recorded no successful cycle (${HEARTBEAT_METRIC.name} < ${a.threshold}) in ` +
      `${a.datapointsToAlarm} consecutive ${periodSeconds} s periods: alerts are not being evaluated ` +
      '(evaluator stopped, failing, or a target unreadable). See docs/alerts.md, "Watching the watcher".',
    ActionsEnabled: true,
    AlarmActions: [...options.topicArns],
    OKActions: [...options.topicArns],
    Namespace: options.namespace,
    MetricName: HEARTBEAT_METRIC.name,
    Dimensions: [{ Name: HEARTBEAT_METRIC.dimension, Value: options.stage }],
    Statistic: a.statistic,
    Period: periodSeconds,
    EvaluationPeriods: a.evaluationPeriods,
    DatapointsToAlarm: a.datapointsToAlarm,
    Threshold: a.threshold,
    ComparisonOperator: a.comparisonOperator,
    TreatMissingData: a.treatMissingData,
  };
}
