/**
 * CloudWatch metric alarms in the twin: what PutMetricAlarm accepts, and how an alarm is evaluated over the stored
 * datums, with CloudWatch's semantics (AWS CloudWatch User Guide, "Using Amazon CloudWatch alarms" and "Configuring
 * how CloudWatch alarms treat missing data"; API reference, PutMetricAlarm):
 *
 * - the metric is named exactly: namespace, metric name and the full set of dimensions (and the unit, when set);
 * - datums are aggregated with the statistic into periods aligned to multiples of `Period` since the epoch, and the
 *   evaluation range is the last `EvaluationPeriods` periods that have ended;
 * - `DatapointsToAlarm` (M) of those (N) must breach for ALARM ("M out of N"); otherwise OK;
 * - a period without datums is missing, and `TreatMissingData` decides: `breaching` counts it as breaching,
 *   `notBreaching` as within the threshold, `ignore` keeps the alarm's state when too few datapoints are left to
 *   decide, and `missing` (the default) goes to INSUFFICIENT_DATA when every datapoint of the range is missing;
 * - a new alarm starts in INSUFFICIENT_DATA ("Unchecked: Initial alarm creation"); the actions of a state run when
 *   the alarm enters it (ActionsEnabled).
 *
 * Simplifications, each on the side of the product seeing what CloudWatch would show: the twin evaluates at the times
 * it is told to (startCloudWatchTwin's timer, or `evaluateAlarms`), not on CloudWatch's own minute; a period of 10 or
 * 30 s is accepted for any metric (CloudWatch asks for a high-resolution metric), so that tests can compress time;
 * metric math, percentiles, anomaly detection and composite alarms are refused.
 */

export const ALARM_STATES = { ok: 'OK', alarm: 'ALARM', insufficientData: 'INSUFFICIENT_DATA' } as const;
export type AlarmState = (typeof ALARM_STATES)[keyof typeof ALARM_STATES];

export const ALARM_STATISTICS = ['SampleCount', 'Average', 'Sum', 'Minimum', 'Maximum'] as const;
export type AlarmStatistic = (typeof ALARM_STATISTICS)[number];

export const COMPARISON_OPERATORS = [
  'GreaterThanOrEqualToThreshold',
  'GreaterThanThreshold',
  'LessThanThreshold',
  'LessThanOrEqualToThreshold',
] as const;
export type ComparisonOperator = (typeof COMPARISON_OPERATORS)[number];

export const TREAT_MISSING_DATA = ['breaching', 'notBreaching', 'ignore', 'missing'] as const;
export type TreatMissingData = (typeof TREAT_MISSING_DATA)[number];

/** An alarm's definition, as PutMetricAlarm takes it (the single-metric form). */
export interface AlarmDefinition {
  alarmName: string;
  alarmDescription: string | undefined;
  actionsEnabled: boolean;
  alarmActions: string[];
  okActions: string[];
  insufficientDataActions: string[];
  namespace: string;
  metricName: string;
  dimensions: Record<string, string>;
  statistic: AlarmStatistic;
  unit: string | undefined;
  periodSeconds: number;
  evaluationPeriods: number;
  datapointsToAlarm: number;
  threshold: number;
  comparisonOperator: ComparisonOperator;
  treatMissingData: TreatMissingData;
}

/** An alarm as the twin keeps it: its definition and its state. */
export interface TwinAlarm extends AlarmDefinition {
  alarmArn: string;
  configurationUpdatedAtMs: number;
  state: AlarmState;
  stateReason: string;
  stateReasonData: string | undefined;
  stateUpdatedAtMs: number;
}

/** The datums an alarm can read: what the twin stored from PutMetricData. */
export interface AlarmDatum {
  namespace: string;
  metricName: string;
  unit: string | undefined;
  value: number;
  timestampMs: number;
  dimensions: Record<string, string>;
}

/** One period of the evaluation range: its start and its aggregated value (undefined: missing). */
export interface PeriodValue {
  startMs: number;
  value: number | undefined;
}

/** What one evaluation decided: the new state with CloudWatch's reason, or no change (`ignore` with too little data). */
export type AlarmVerdict =
  | { change: false; why: string }
  | { change: true; state: AlarmState; reason: string; reasonData: string; periods: PeriodValue[] };

/** A PutMetricAlarm input the twin refuses: CloudWatch's error code and message. */
export class AlarmDefinitionError extends Error {
  constructor(
    readonly code: 'InvalidParameterValue' | 'MissingParameter' | 'InvalidParameterCombination',
    message: string,
  ) {
    super(message);
    this.name = 'AlarmDefinitionError';
  }
}

const MAX_ACTIONS = 5;
const MAX_DIMENSIONS = 30;
const MAX_EVALUATION_SECONDS = 86_400;
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;

/** Parses a PutMetricAlarm request body (AWS JSON 1.0) into a definition, refusing what CloudWatch refuses. */
export function parsePutMetricAlarm(input: Record<string, unknown>): AlarmDefinition {
  const missing = (name: string) => new AlarmDefinitionError('MissingParameter', `The parameter ${name} is required.`);
  const invalid = (name: string, why: string) =>
    new AlarmDefinitionError('InvalidParameterValue', `The value for parameter ${name} is invalid: ${why}.`);
  const text = (name: string, required: boolean): string | undefined => {
    const value = input[name];
    if (value === undefined || value === null) {
      if (required) throw missing(name);
      return undefined;
    }
    if (typeof value !== 'string') throw invalid(name, 'must be a string');
    return value;
  };
  const number = (name: string, required: boolean): number | undefined => {
    const value = input[name];
    if (value === undefined || value === null) {
      if (required) throw missing(name);
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(name, 'must be a finite number');
    return value;
  };
  const actions = (name: string): string[] => {
    const value = input[name] ?? [];
    if (!Array.isArray(value) || !value.every((a): a is string => typeof a === 'string'))
      throw invalid(name, 'must be a list of ARNs');
    if (value.length > MAX_ACTIONS) throw invalid(name, `at most ${MAX_ACTIONS} actions`);
    const other = value.find((arn) => !SNS_TOPIC_ARN.test(arn));
    if (other !== undefined) throw invalid(name, `${other} is not an SNS topic ARN (the twin runs only SNS actions)`);
    return value;
  };
  for (const unsupported of ['Metrics', 'ExtendedStatistic', 'ThresholdMetricId', 'EvaluateLowSampleCountPercentile'])
    if (input[unsupported] !== undefined)
      throw new AlarmDefinitionError(
        'InvalidParameterCombination',
        `${unsupported}: the twin supports single-metric alarms with a statistic only`,
      );

  const alarmName = text('AlarmName', true) as string;
  if (alarmName.length < 1 || alarmName.length > 255) throw invalid('AlarmName', 'must be 1-255 characters');
  const statistic = text('Statistic', true) as string;
  if (!(ALARM_STATISTICS as readonly string[]).includes(statistic))
    throw invalid('Statistic', `must be one of ${ALARM_STATISTICS.join(', ')}`);
  const comparisonOperator = text('ComparisonOperator', true) as string;
  if (!(COMPARISON_OPERATORS as readonly string[]).includes(comparisonOperator))
    throw invalid('ComparisonOperator', `must be one of ${COMPARISON_OPERATORS.join(', ')}`);
  const treatMissingData = text('TreatMissingData', false) ?? 'missing';
  if (!(TREAT_MISSING_DATA as readonly string[]).includes(treatMissingData))
    throw invalid('TreatMissingData', `must be one of ${TREAT_MISSING_DATA.join(', ')}`);

  const periodSeconds = number('Period', true) as number;
  if (!Number.isInteger(periodSeconds) || !(periodSeconds === 10 || periodSeconds === 30 || periodSeconds % 60 === 0))
    throw invalid('Period', 'must be 10, 30 or a multiple of 60');
  const evaluationPeriods = number('EvaluationPeriods', true) as number;
  if (!Number.isInteger(evaluationPeriods) || evaluationPeriods < 1)
    throw invalid('EvaluationPeriods', 'must be an integer >= 1');
  if (periodSeconds * evaluationPeriods > MAX_EVALUATION_SECONDS)
    throw invalid('EvaluationPeriods', `Period x EvaluationPeriods must be at most ${MAX_EVALUATION_SECONDS} seconds`);
  const datapointsToAlarm = number('DatapointsToAlarm', false) ?? evaluationPeriods;
  if (!Number.isInteger(datapointsToAlarm) || datapointsToAlarm < 1 || datapointsToAlarm > evaluationPeriods)
    throw invalid('DatapointsToAlarm', `must be an integer from 1 to EvaluationPeriods (${evaluationPeriods})`);

  const dimensionList = input.Dimensions ?? [];
  if (!Array.isArray(dimensionList)) throw invalid('Dimensions', 'must be a list');
  if (dimensionList.length > MAX_DIMENSIONS) throw invalid('Dimensions', `at most ${MAX_DIMENSIONS} dimensions`);
  const dimensions: Record<string, string> = {};
  for (const dimension of dimensionList as unknown[]) {
    const d = dimension as { Name?: unknown; Value?: unknown } | null;
    if (typeof d?.Name !== 'string' || typeof d.Value !== 'string')
      throw invalid('Dimensions', 'every dimension needs a Name and a Value');
    dimensions[d.Name] = d.Value;
  }
  const actionsEnabled = input.ActionsEnabled ?? true;
  if (typeof actionsEnabled !== 'boolean') throw invalid('ActionsEnabled', 'must be true or false');

  return {
    alarmName,
    alarmDescription: text('AlarmDescription', false),
    actionsEnabled,
    alarmActions: actions('AlarmActions'),
    okActions: actions('OKActions'),
    insufficientDataActions: actions('InsufficientDataActions'),
    namespace: text('Namespace', true) as string,
    metricName: text('MetricName', true) as string,
    dimensions,
    statistic: statistic as AlarmStatistic,
    unit: text('Unit', false),
    periodSeconds,
    evaluationPeriods,
    datapointsToAlarm,
    threshold: number('Threshold', true) as number,
    comparisonOperator: comparisonOperator as ComparisonOperator,
    treatMissingData: treatMissingData as TreatMissingData,
  };
}

/** The values of the last `EvaluationPeriods` periods that ended at or before `nowMs`, oldest first. */
export function periodValues(alarm: AlarmDefinition, datums: readonly AlarmDatum[], nowMs: number): PeriodValue[] {
  const periodMs = alarm.periodSeconds * 1000;
  const endMs = Math.floor(nowMs / periodMs) * periodMs;
  const firstMs = endMs - alarm.evaluationPeriods * periodMs;
  const buckets = new Map<number, number[]>();
  for (const datum of datums) {
    if (!sameMetric(alarm, datum) || datum.timestampMs < firstMs || datum.timestampMs >= endMs) continue;
    const start = Math.floor(datum.timestampMs / periodMs) * periodMs;
    buckets.set(start, [...(buckets.get(start) ?? []), datum.value]);
  }
  return Array.from({ length: alarm.evaluationPeriods }, (_, i) => {
    const startMs = firstMs + i * periodMs;
    const values = buckets.get(startMs);
    return { startMs, value: values === undefined ? undefined : aggregate(alarm.statistic, values) };
  });
}

/** Evaluates `alarm` at `nowMs` over `datums`: CloudWatch's M-of-N rule with its treatment of missing data. */
export function evaluateAlarm(alarm: TwinAlarm, datums: readonly AlarmDatum[], nowMs: number): AlarmVerdict {
  const periods = periodValues(alarm, datums, nowMs);
  const present = periods.filter((p): p is { startMs: number; value: number } => p.value !== undefined);
  const missing = periods.length - present.length;
  const breachingPresent = present.filter((p) => breaches(alarm, p.value)).length;
  const m = alarm.datapointsToAlarm;
  const n = alarm.evaluationPeriods;
  const data = (state: AlarmState, reason: string): AlarmVerdict => ({
    change: true,
    state,
    reason,
    periods,
    reasonData: JSON.stringify({
      version: '1.0',
      queryDate: cloudWatchTime(nowMs),
      startDate: cloudWatchTime(periods[0]?.startMs ?? nowMs),
      statistic: alarm.statistic,
      period: alarm.periodSeconds,
      recentDatapoints: present.map((p) => p.value),
      threshold: alarm.threshold,
      evaluatedDatapoints: periods.map((p) => ({
        timestamp: cloudWatchTime(p.startMs),
        ...(p.value === undefined ? {} : { sampleCount: 1, value: p.value }),
      })),
    }),
  });

  if (present.length === 0) {
    if (alarm.treatMissingData === 'breaching')
      return data(
        ALARM_STATES.alarm,
        `Threshold Crossed: no datapoints were received for ${n} periods and ${n} missing datapoints were treated as [Breaching].`,
      );
    if (alarm.treatMissingData === 'notBreaching')
      return data(
        ALARM_STATES.ok,
        `Threshold Crossed: no datapoints were received for ${n} periods and ${n} missing datapoints were treated as [NonBreaching].`,
      );
    if (alarm.treatMissingData === 'ignore')
      return { change: false, why: 'no datapoints, and missing data is ignored: the state is kept' };
    return data(ALARM_STATES.insufficientData, `Insufficient Data: ${n} datapoints were unknown.`);
  }

  const listed = present
    .slice(-5)
    .reverse()
    .map((p) => `${formatValue(p.value)} (${shortTime(p.startMs)})`)
    .join(', ');
  const relation = RELATION[alarm.comparisonOperator];
  if (alarm.treatMissingData === 'breaching' || alarm.treatMissingData === 'notBreaching') {
    const breaching = breachingPresent + (alarm.treatMissingData === 'breaching' ? missing : 0);
    const treated =
      missing === 0
        ? ''
        : ` and ${missing} missing datapoint${missing === 1 ? ' was' : 's were'} treated as [${alarm.treatMissingData === 'breaching' ? 'Breaching' : 'NonBreaching'}]`;
    if (breaching >= m)
      return data(
        ALARM_STATES.alarm,
        `Threshold Crossed: ${breachingPresent} out of the last ${present.length} datapoints [${listed}] ${relation} the threshold (${formatValue(alarm.threshold)})${treated} (minimum ${m} datapoint${m === 1 ? '' : 's'} for OK -> ALARM transition).`,
      );
    return data(
      ALARM_STATES.ok,
      `Threshold Crossed: ${present.length - breachingPresent} out of the last ${present.length} datapoints [${listed}] ${NOT_RELATION[alarm.comparisonOperator]} the threshold (${formatValue(alarm.threshold)})${treated} (minimum ${n - m + 1} datapoint${n - m + 1 === 1 ? '' : 's'} for ALARM -> OK transition).`,
    );
  }
  // `missing` and `ignore`: only the datapoints that exist count.
  if (breachingPresent >= m)
    return data(
      ALARM_STATES.alarm,
      `Threshold Crossed: ${breachingPresent} out of the last ${present.length} datapoints [${listed}] ${relation} the threshold (${formatValue(alarm.threshold)}) (minimum ${m} datapoint${m === 1 ? '' : 's'} for OK -> ALARM transition).`,
    );
  if (present.length - breachingPresent >= Math.min(present.length, n - m + 1))
    return data(
      ALARM_STATES.ok,
      `Threshold Crossed: ${present.length - breachingPresent} out of the last ${present.length} datapoints [${listed}] ${NOT_RELATION[alarm.comparisonOperator]} the threshold (${formatValue(alarm.threshold)}) (minimum ${Math.min(present.length, n - m + 1)} datapoint${n - m + 1 === 1 ? '' : 's'} for ALARM -> OK transition).`,
    );
  return { change: false, why: 'too few datapoints to decide: the state is kept' };
}

/** The message CloudWatch publishes to an alarm's SNS actions when it changes state, and its subject. */
export function alarmNotification(
  alarm: TwinAlarm,
  oldState: AlarmState,
  context: { accountId: string; region: string },
): { subject: string; message: string } {
  const regionName = REGION_NAMES[context.region] ?? context.region;
  const subject = `${alarm.state}: "${alarm.alarmName}" in ${regionName}`;
  const message = {
    AlarmName: alarm.alarmName,
    AlarmDescription: alarm.alarmDescription ?? null,
    AWSAccountId: context.accountId,
    AlarmConfigurationUpdatedTimestamp: cloudWatchTime(alarm.configurationUpdatedAtMs),
    NewStateValue: alarm.state,
    NewStateReason: alarm.stateReason,
    StateChangeTime: cloudWatchTime(alarm.stateUpdatedAtMs),
    Region: regionName,
    AlarmArn: alarm.alarmArn,
    OldStateValue: oldState,
    OKActions: alarm.okActions,
    AlarmActions: alarm.alarmActions,
    InsufficientDataActions: alarm.insufficientDataActions,
    Trigger: {
      MetricName: alarm.metricName,
      Namespace: alarm.namespace,
      StatisticType: 'Statistic',
      Statistic: alarm.statistic.toUpperCase(),
      Unit: alarm.unit ?? null,
      Dimensions: Object.entries(alarm.dimensions).map(([name, value]) => ({ value, name })),
      Period: alarm.periodSeconds,
      EvaluationPeriods: alarm.evaluationPeriods,
      DatapointsToAlarm: alarm.datapointsToAlarm,
      ComparisonOperator: alarm.comparisonOperator,
      Threshold: alarm.threshold,
      TreatMissingData: alarm.treatMissingData,
      EvaluateLowSampleCountPercentile: '',
    },
  };
  // SNS subjects are at most 100 characters.
  return { subject: subject.length > 100 ? `${subject.slice(0, 97)}...` : subject, message: JSON.stringify(message) };
}

/** The actions of the state an alarm just entered. */
export function actionsFor(alarm: TwinAlarm): string[] {
  if (!alarm.actionsEnabled) return [];
  if (alarm.state === ALARM_STATES.alarm) return alarm.alarmActions;
  if (alarm.state === ALARM_STATES.ok) return alarm.okActions;
  return alarm.insufficientDataActions;
}

function sameMetric(alarm: AlarmDefinition, datum: AlarmDatum): boolean {
  if (datum.namespace !== alarm.namespace || datum.metricName !== alarm.metricName) return false;
  if (alarm.unit !== undefined && datum.unit !== alarm.unit) return false;
  const names = Object.keys(alarm.dimensions);
  // A metric is identified by its whole set of dimensions: a datum with one more (or one fewer) is another metric.
  return (
    names.length === Object.keys(datum.dimensions).length &&
    names.every((name) => datum.dimensions[name] === alarm.dimensions[name])
  );
}

function aggregate(statistic: AlarmStatistic, values: number[]): number {
  switch (statistic) {
    case 'SampleCount':
      return values.length;
    case 'Sum':
      return values.reduce((a, b) => a + b, 0);
    case 'Average':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'Minimum':
      return Math.min(...values);
    case 'Maximum':
      return Math.max(...values);
  }
}

function breaches(alarm: AlarmDefinition, value: number): boolean {
  switch (alarm.comparisonOperator) {
    case 'GreaterThanOrEqualToThreshold':
      return value >= alarm.threshold;
    case 'GreaterThanThreshold':
      return value > alarm.threshold;
    case 'LessThanThreshold':
      return value < alarm.threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= alarm.threshold;
  }
}

const RELATION: Record<ComparisonOperator, string> = {
  GreaterThanOrEqualToThreshold: 'were greater than or equal to',
  GreaterThanThreshold: 'were greater than',
  LessThanThreshold: 'were less than',
  LessThanOrEqualToThreshold: 'were less than or equal to',
};
const NOT_RELATION: Record<ComparisonOperator, string> = {
  GreaterThanOrEqualToThreshold: 'were not greater than or equal to',
  GreaterThanThreshold: 'were not greater than',
  LessThanThreshold: 'were not less than',
  LessThanOrEqualToThreshold: 'were not less than or equal to',
};

const REGION_NAMES: Record<string, string> = {
  'us-east-1': 'US East (N. Virginia)',
  'us-east-2': 'US East (Ohio)',
  'us-west-2': 'US West (Oregon)',
  'eu-west-1': 'EU (Ireland)',
  'eu-central-1': 'EU (Frankfurt)',
};

/** CloudWatch's value format in reasons: one decimal place at least (1.0, 0.5). */
function formatValue(value: number): string {
  return Number.isInteger(value) ? value.toFixed(1) : String(value);
}

/** `2026-12-03T14:31:00.000+0000`, as CloudWatch writes times in alarm messages. */
function cloudWatchTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

/** `03/12/26 14:31:00`, as CloudWatch lists datapoints in a state reason (dd/MM/yy HH:mm:ss, UTC). */
function shortTime(ms: number): string {
  const d = new Date(ms).toISOString();
  return `${d.slice(8, 10)}/${d.slice(5, 7)}/${d.slice(2, 4)} ${d.slice(11, 19)}`;
}
