/**
 * The monthly bill of the control plane from what one run of each function did on the twin (bench/cost.ts measures
 * it) and the prices of bench/prices.ts. Pure arithmetic: every input is stated, every figure can be checked by hand.
 */
import { BenchError } from './errors.js';
import { CLOUDWATCH_METRIC_TIERS, type PriceName, PRICES } from './prices.js';

/** Days in an average month (365 / 12): what "per month" means in every figure here. */
export const DAYS_PER_MONTH = 365 / 12;

const UNIT_SECONDS: Record<string, number> = {
  minute: 60,
  minutes: 60,
  hour: 3600,
  hours: 3600,
  day: 86_400,
  days: 86_400,
};
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/**
 * How often an EventBridge schedule fires in an average month: `rate(N unit)` (minutes, hours, days), or a `cron()`
 * with fixed minutes and hours on every day or on listed weekdays (`cron(0 8 ? * MON *)`: 365 / 12 / 7 ≈ 4.35).
 * Throws BenchError for other expressions, naming what is accepted.
 */
export function runsPerMonth(schedule: string): number {
  const rate = /^rate\((\d+) (minutes?|hours?|days?)\)$/.exec(schedule);
  if (rate !== null) {
    const seconds = Number(rate[1]) * (UNIT_SECONDS[rate[2] as string] ?? NaN);
    if (!(seconds > 0)) throw new BenchError(`${schedule}: the rate must be more than zero`);
    return (DAYS_PER_MONTH * 86_400) / seconds;
  }
  const cron = /^cron\((\S+) (\S+) (\S+) (\S+) (\S+) (\S+)\)$/.exec(schedule);
  if (cron !== null) {
    const [, minutes, hours, dayOfMonth, month, dayOfWeek] = cron as unknown as string[];
    const fixed = (field: string | undefined) => (field ?? '').split(',').filter((part) => /^\d+$/.test(part)).length;
    const perDay = fixed(minutes) * fixed(hours);
    const everyMonth = month === '*';
    if (
      perDay > 0 &&
      everyMonth &&
      (dayOfMonth === '*' || dayOfMonth === '?') &&
      (dayOfWeek === '*' || dayOfWeek === '?')
    )
      return perDay * DAYS_PER_MONTH;
    const days = (dayOfWeek ?? '').split(',');
    if (perDay > 0 && everyMonth && dayOfMonth === '?' && days.every((day) => WEEKDAYS.includes(day)))
      return (perDay * days.length * DAYS_PER_MONTH) / 7;
  }
  throw new BenchError(
    `${JSON.stringify(schedule)} is not a schedule the cost bench can count; accepted: rate(N minutes|hours|days), ` +
      'or cron() with fixed minutes and hours on every day or on listed weekdays (MON,THU)',
  );
}

/** USD for `quantity` units of one price of the table. */
export function priceOf(name: PriceName, quantity: number): number {
  const price = PRICES[name];
  return (quantity / price.per) * price.usd;
}

/** USD a month for `metrics` custom metrics under CloudWatch's tiers (the first 10,000 at the first tier's price, ...). */
export function cloudWatchMetricsUsd(metrics: number): number {
  let usd = 0;
  let below = 0;
  for (const { upTo, price } of CLOUDWATCH_METRIC_TIERS) {
    const inTier = Math.max(0, Math.min(metrics, upTo) - below);
    usd += priceOf(price, inTier);
    below = upTo;
    if (metrics <= upTo) break;
  }
  return usd;
}

/** What one scheduled function does per run, for ONE target (measured on the twin), and how it is deployed. */
export interface FunctionRun {
  /** The serverless.yml function key (`metricsCollector`). */
  name: string;
  schedule: string;
  /** false: the schedule is off (`collector.schedule: off`), the function costs nothing. */
  enabled: boolean;
  memoryMb: number;
  /** Billed seconds of one invocation that do not grow with targets (the evaluator's wait between its cycles). */
  fixedSeconds: number;
  /** Billed seconds one target adds to an invocation (its handler time on the twin). */
  secondsPerTarget: number;
  /** Per target and run. */
  putMetricData: number;
  dynamoDbReads: number;
  dynamoDbWrites: number;
  snsPublishes: number;
  querySamples: number;
  /** Per run whatever the targets (the evaluator's heartbeat: one PutMetricData and one write per cycle). */
  fixedPutMetricData: number;
  fixedDynamoDbReads: number;
  fixedDynamoDbWrites: number;
}

/** What the bill is computed from: per-target figures measured on a twin of `podsPerTarget` Pods. */
export interface BillInputs {
  podsPerTarget: number;
  functions: readonly FunctionRun[];
  /** Distinct CloudWatch series (name + dimensions) one target's collector publishes. */
  seriesPerTarget: number;
  /** Series whatever the targets (the evaluator's heartbeat). */
  fixedSeries: number;
  transitionsPerCalibration: number;
  calibrationsPerTargetPerMonth: number;
}

/** One line of the monthly table. */
export interface BillLine {
  item: string;
  quantity: number;
  unit: string;
  usd: number;
}

export interface MonthlyBill {
  targets: number;
  podsPerTarget: number;
  lines: BillLine[];
  totalUsd: number;
}

/**
 * The monthly bill for `targets` targets shaped like the measured one. Invocations do not grow with targets (each
 * schedule runs one invocation that loops over them); everything a target causes (series, requests, reads, samples,
 * handler seconds) grows linearly with them: an upper bound for the seconds, as handlers overlap a few targets.
 */
export function monthlyBill(inputs: BillInputs, targets: number): MonthlyBill {
  if (!Number.isInteger(targets) || targets < 1) throw new BenchError(`targets: ${targets} is not an integer >= 1`);
  const running = inputs.functions.filter((f) => f.enabled);
  const runs = (f: FunctionRun) => runsPerMonth(f.schedule);
  const sum = (of: (f: FunctionRun) => number) => running.reduce((total, f) => total + of(f), 0);

  const collectorRunning = running.some((f) => f.name === 'metricsCollector');
  const series = (collectorRunning ? inputs.seriesPerTarget * targets : 0) + inputs.fixedSeries;
  const requests = sum((f) => runs(f) * (f.putMetricData * targets + f.fixedPutMetricData));
  const invocations = sum(runs);
  const gbSeconds = sum((f) => runs(f) * (f.memoryMb / 1024) * (f.fixedSeconds + f.secondsPerTarget * targets));
  const transitions = inputs.transitionsPerCalibration * inputs.calibrationsPerTargetPerMonth * targets;
  const reads = sum((f) => runs(f) * (f.dynamoDbReads * targets + f.fixedDynamoDbReads));
  const writes = sum((f) => runs(f) * (f.dynamoDbWrites * targets + f.fixedDynamoDbWrites));
  const publishes = sum((f) => runs(f) * f.snsPublishes * targets);
  const samples = sum((f) => runs(f) * f.querySamples * targets);

  const lines: BillLine[] = [
    { item: 'CloudWatch custom metrics', quantity: series, unit: 'metrics', usd: cloudWatchMetricsUsd(series) },
    {
      item: 'CloudWatch PutMetricData',
      quantity: requests,
      unit: 'requests',
      usd: priceOf('cloudWatchPutMetricData', requests),
    },
    {
      item: 'Lambda requests',
      quantity: invocations,
      unit: 'invocations',
      usd: priceOf('lambdaRequests', invocations),
    },
    { item: 'Lambda duration', quantity: gbSeconds, unit: 'GB-s', usd: priceOf('lambdaArmGbSeconds', gbSeconds) },
    {
      item: 'Step Functions',
      quantity: transitions,
      unit: 'state transitions',
      usd: priceOf('stepFunctionsTransitions', transitions),
    },
    { item: 'DynamoDB reads', quantity: reads, unit: 'read request units', usd: priceOf('dynamoDbReads', reads) },
    { item: 'DynamoDB writes', quantity: writes, unit: 'write request units', usd: priceOf('dynamoDbWrites', writes) },
    { item: 'SNS publishes', quantity: publishes, unit: 'publishes', usd: priceOf('snsPublishes', publishes) },
    { item: 'AMP query samples', quantity: samples, unit: 'samples', usd: priceOf('ampQuerySamples', samples) },
    // The product only reads AMP: the vLLM and DCGM series are ingested by the user's own scrapers either way.
    { item: 'AMP ingestion', quantity: 0, unit: 'samples (the product ingests none)', usd: 0 },
  ];
  return {
    targets,
    podsPerTarget: inputs.podsPerTarget,
    lines,
    totalUsd: lines.reduce((total, line) => total + line.usd, 0),
  };
}
