import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  SFNClient,
  StartExecutionCommand,
  type HistoryEvent,
} from '@aws-sdk/client-sfn';
import { Logger } from '@aws-lambda-powertools/logger';
import { InvalidArgumentError, type Command } from 'commander';
import {
  calibrationTarget,
  isBatchInput,
  parseCalibrationBatchInput,
  parseCalibrationInput,
  stepQueries,
  STRATEGY_NAMES,
  type CalibrationInput,
  type CalibrationReport,
  type StepMeasurement,
  type StepQueries,
} from '../../shared/calibration/index.js';
import {
  BATCH_REPORT_FILE,
  childFailure,
  executionFailure,
  REPORT_FILES,
  type BatchReport,
  type StoredBatchReport,
  type StoredReport,
} from '../../shared/calibration/workflow/index.js';
import { systemClock } from '../../shared/clock/index.js';
import {
  guardSingleValue,
  HttpMetricsSource,
  isRefusedAnswer,
  VALUE_DOMAIN,
  type InstantSample,
  type MetricsSource,
} from '../../shared/metrics/index.js';
import type { TwinState, WorkflowEvent } from '../../sim/harness/index.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { twinMetricsSource } from '../../sim/harness/twinTarget.js';
import { harness } from '../harness.js';
import { AwsHistoryEvents } from './awsHistory.js';
import { registerCalibrationHistoryCommands } from './calibrateHistory.js';
import { readStructuredObject } from '../readFile.js';
import { formatNumber, progressBar, writeProgress } from '../output.js';
import { printJson } from '../options.js';

/**
 * `vllm-pilot calibrate`: runs the calibration state machine (statemachines/calibration.asl.json) against the twin
 * with the local runner and the product's handlers, or starts it on AWS Step Functions and follows it.
 */

/**
 * A bad option or file found while the command runs (commander's own errors are for option parsing: main.ts prints
 * those as usage errors). The CLI has no errors module of its own yet; this is its only named error.
 */
export class CalibrateCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrateCommandError';
  }
}

/** How often the hold's progress line reads the queue and p95 from Prometheus. */
const LIVE_REFRESH_MS = 1_000;
/** The live p95 covers this many trailing seconds. */
const LIVE_WINDOW_SECONDS = 10;
/** How often `--aws` reads the execution history. */
const AWS_POLL_MS = 3_000;

interface LocalOptions {
  stateFile?: string;
  /** Present: the action refuses to run without it. */
  input: string;
  strategy?: string;
  out?: string;
  json?: boolean;
  verbose?: boolean;
  executionName?: string;
  aws?: boolean;
  stateMachineArn?: string;
  region?: string;
}

export function registerCalibrateCommand(program: Command): void {
  const calibrate = program
    .command('calibrate')
    // Its own flags only before a subcommand (`calibrate list --json` is list's --json): list, show and rollback
    // share names with the run's flags (--state-file, --region, --json, --out).
    .enablePositionalOptions()
    .description(
      'find the request rate at which one replica saturates and derive the KEDA thresholds (the calibration state machine), against the twin or on AWS',
    )
    // Required, but checked in the action: commander would also ask for it before `calibrate rollback`.
    .option(
      '--input <file>',
      "the calibration input (JSON or YAML; required): one target, or `targets: [...]` with `maxConcurrency` to calibrate several in one execution; against the twin, target fields it leaves out are the twin's",
    )
    .option('--state-file <file>', 'run locally against the twin whose state file this is (written by `twin up`)')
    .option(
      '--strategy <name>',
      `the load plan's strategy (${STRATEGY_NAMES.join(', ')}); overrides plan.strategy`,
      strategyName,
    )
    .option('--out <dir>', 'where the report and chart go (default ./calibration-<execution name>)')
    .option(
      '--execution-name <name>',
      'the execution name (default calib-<deployment>-<UTC time>)',
      executionNameOption,
    )
    .option('--json', 'print the report as JSON instead of the summary')
    .option('--verbose', "also print the handlers' JSON log lines")
    .option('--aws', 'start the execution on AWS Step Functions and follow it (needs --state-machine-arn)')
    .option('--state-machine-arn <arn>', 'the deployed calibration state machine (with --aws)')
    .option('--region <region>', "the state machine's region (with --aws; default: from the ARN)")
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  vllm-pilot calibrate --state-file twin.json --input examples/calibration-twin.yaml',
        '  AWS_PROFILE=prod vllm-pilot calibrate --aws --input examples/calibration-aws.yaml \\',
        '      --state-machine-arn arn:aws:states:us-east-2:123456789012:stateMachine:vllm-eks-pilot-prod-calibration',
        '  vllm-pilot calibrate list --help    # the history of a deployment: list, show <execution>',
        '',
      ].join('\n'),
    )
    .action(async (opts: LocalOptions) => {
      if ((opts as { input?: string }).input === undefined)
        calibrate.error("error: required option '--input <file>' not specified");
      // Every file argument before the twin or AWS is touched: a bad one is refused now, not after the run.
      if (opts.out !== undefined) await checkOutFolder(opts.out);
      const given = await readInputFile(opts.input);
      if (opts.aws) return calibrateOnAws(opts, given);
      if (opts.stateFile === undefined)
        throw new CalibrateCommandError(
          'give --state-file (run against the twin) or --aws --state-machine-arn (run on AWS)',
        );
      return calibrateOnTwin({ ...opts, stateFile: opts.stateFile }, given);
    });
  registerRollbackCommand(calibrate);
  registerCalibrationHistoryCommands(calibrate);
}

function strategyName(value: string): string {
  if (!(STRATEGY_NAMES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`unknown strategy "${value}"; accepted: ${STRATEGY_NAMES.join(', ')}`);
  return value;
}

/** Step Functions execution names: 1-80 letters, digits, "-" and "_". */
function executionNameOption(value: string): string {
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(value))
    throw new InvalidArgumentError(`"${value}" is not an execution name; accepted: 1-80 letters, digits, "-" or "_"`);
  return value;
}

/** Reads the input file (JSON or YAML; duplicate keys refused in both) as plain data: one line when it cannot. */
async function readInputFile(path: string): Promise<Record<string, unknown>> {
  return readStructuredObject('--input', path);
}

/**
 * `--out` is the folder the report goes to: refused when it is a file, or a folder that already holds a report (a
 * second run would overwrite the first's). A folder that does not exist yet is created by the report store.
 */
async function checkOutFolder(path: string): Promise<void> {
  const found = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new CalibrateCommandError(`--out ${path}: cannot read it (${error.code ?? error.message})`);
  });
  if (found === undefined) return;
  if (!found.isDirectory())
    throw new CalibrateCommandError(
      `--out ${path}: is an existing file; accepted: a folder for the report (new, or without ${REPORT_FILES.report})`,
    );
  const entries = await readdir(path).catch((error: NodeJS.ErrnoException) => {
    throw new CalibrateCommandError(`--out ${path}: cannot list it (${error.code ?? error.message})`);
  });
  for (const file of [REPORT_FILES.report, BATCH_REPORT_FILE])
    if (entries.includes(file))
      throw new CalibrateCommandError(
        `--out ${path}: already holds a report (${join(path, file)}); accepted: a new folder, or one without ${file}`,
      );
}

/** `calib-<deployment>-<yyyymmddThhmmss>` in UTC. */
function defaultExecutionName(deployment: unknown, nowMs: number): string {
  const stamp = new Date(nowMs).toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  const name = typeof deployment === 'string' ? deployment : 'run';
  return `calib-${name}-${stamp}`.slice(0, 80);
}

async function calibrateOnTwin(
  opts: LocalOptions & { stateFile: string },
  input: Record<string, unknown>,
): Promise<void> {
  const state = await readTwinState(opts.stateFile);
  if (isBatchInput(input)) await calibrateTwinTargets(state, { ...opts, input });
  else await calibrateTwin(state, { ...opts, input });
}

/** `--strategy` over every entry's plan (a many-target input) or the input's own. */
function withStrategy(raw: Record<string, unknown>, strategy: string | undefined): Record<string, unknown> {
  if (strategy === undefined) return raw;
  return { ...raw, plan: { ...(raw.plan as object | undefined), strategy } };
}

/** A many-target input with `--strategy` applied to every entry (entries that are not objects are left to validation). */
function batchWithStrategy(raw: Record<string, unknown>, strategy: string | undefined): Record<string, unknown> {
  if (!Array.isArray(raw.targets)) return raw;
  return {
    ...raw,
    targets: raw.targets.map((entry: unknown) =>
      entry !== null && typeof entry === 'object' && !Array.isArray(entry)
        ? withStrategy(entry as Record<string, unknown>, strategy)
        : entry,
    ),
  };
}

/**
 * Many targets against the twin: every entry gets the twin's target fields it leaves out, the list is checked as
 * ValidateTargets would, then one execution runs each target as a child execution. Progress per target on stderr;
 * the combined summary (or report, --json) on stdout; a non-zero exit when any target failed.
 */
async function calibrateTwinTargets(
  state: TwinState,
  opts: Omit<LocalOptions, 'stateFile' | 'aws' | 'stateMachineArn' | 'region' | 'input'> & {
    input: Record<string, unknown>;
  },
): Promise<BatchReport> {
  const { readBatchOutcome, startTwinCalibration, withTwinTarget } = await harness();
  const given = batchWithStrategy(opts.input, opts.strategy);
  const raw = Array.isArray(given.targets)
    ? {
        ...given,
        targets: given.targets.map((entry: unknown) =>
          entry !== null && typeof entry === 'object' && !Array.isArray(entry)
            ? withTwinTarget(entry as Record<string, unknown>, state)
            : entry,
        ),
      }
    : given;
  const batch = parseCalibrationBatchInput(raw);
  const executionName = opts.executionName ?? defaultExecutionName('batch', systemClock.now());
  const progress = new TargetsProgress(batch.targets.map(({ parsed }) => parsed));
  process.stderr.write(
    `Calibrating ${batch.targets.length} targets on the twin, at most ${batch.maxConcurrency} at once (execution ${executionName})\n`,
  );
  const calibration = await startTwinCalibration(state, {
    input: raw,
    executionName,
    reportsDir: resolve(opts.out ?? `calibration-${executionName}`),
    ...(opts.verbose ? { logger: new Logger({ serviceName: 'calibration' }) } : {}),
    onEvent: (event) => progress.onEvent(event),
    onChildEvent: (child, event) => progress.onChildEvent(child, event),
  });
  const stop = () => calibration.run.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let outcome;
  try {
    outcome = await calibration.run.result;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    calibration.close();
  }
  const { report, stored } = await readBatchOutcome(outcome);
  if (opts.json) printJson(report);
  else process.stdout.write(`${stored.summary}\n`);
  failUnlessAll(stored, report);
  return report;
}

/** A run where some target failed exits non-zero, naming them (the summary above says why each failed). */
function failUnlessAll(stored: StoredBatchReport, report: BatchReport): void {
  if (stored.failed === 0) return;
  const failed = report.targets
    .filter((t) => t.outcome === 'failed')
    .map((t) => `${t.target.namespace ?? '?'}/${t.target.deployment ?? '?'} (${t.failure?.error ?? '?'})`);
  throw executionFailure(
    'CalibrationTargetsFailedError',
    `${stored.failed} of ${report.targets.length} targets failed: ${failed.join(', ')}`,
  );
}

/** Per-target progress on stderr: when each starts, its phases and steps, and how it ended. */
class TargetsProgress {
  readonly #labels: string[];

  constructor(targets: readonly CalibrationInput[]) {
    this.#labels = targets.map((t, i) => `[${i + 1}/${targets.length} ${t.target.namespace}/${t.target.deployment}]`);
  }

  /** The parent's own events: an item starting, and its result (the child's outcome or its caught failure). */
  onEvent(event: WorkflowEvent): void {
    if (event.type === 'MapIterationStarted') line(`${this.#label(event.index)} started`);
    if (event.type !== 'StateExited' || !('index' in event)) return;
    const index = (event as { index: number }).index;
    const output = event.state.output as
      | {
          outcome?: { analysis?: { capacityRps?: { value: number } | null } | null };
          failure?: { Error?: string; Cause?: string };
        }
      | undefined;
    // A caught failure exits CalibrateTarget too, without an outcome: TargetFailed reports it.
    if (event.state.name === 'CalibrateTarget' && output?.outcome !== undefined) {
      const capacity = output.outcome.analysis?.capacityRps?.value;
      line(
        `${this.#label(index)} ✓ succeeded${capacity === undefined ? '' : `: capacity ${formatNumber(capacity)} req/s`}`,
      );
    }
    if (event.state.name === 'TargetFailed') {
      const failure = childFailure(output?.failure);
      line(`${this.#label(index)} ✗ failed: ${failure.error}: ${failure.cause.split('\n')[0] ?? ''}`);
    }
  }

  /** A child's events: its main phases, each measured step, a failing state. */
  onChildEvent(child: string, event: WorkflowEvent): void {
    const label = this.#label(Number(/-t(\d+)$/.exec(child)?.[1] ?? 0) - 1);
    if (event.type === 'StateEntered' && ['Deploy', 'StartWarmup', 'Analyze', 'StoreReport'].includes(event.state.name))
      line(`${label} • ${event.state.name}`);
    else if (event.type === 'StateExited' && event.state.name === 'MeasureStep') {
      const steps = (event.state.output as { steps?: StepMeasurement[] } | undefined)?.steps ?? [];
      const step = steps[steps.length - 1];
      if (step) line(`${label}   ${stepLine(step)}`);
    } else if (event.type === 'StateFailed' && event.state.type !== 'Fail')
      line(`${label}   ${event.state.name} failed: ${event.Error}`);
  }

  #label(index: number): string {
    return this.#labels[index] ?? `[${index + 1}]`;
  }
}

/**
 * Runs the calibration state machine locally against a running twin, with progress on stderr, and prints the outcome:
 * what `calibrate --state-file` does once the state file is read (the demo calls it with a twin it started itself).
 */
export async function calibrateTwin(
  state: TwinState,
  opts: Omit<LocalOptions, 'stateFile' | 'aws' | 'stateMachineArn' | 'region' | 'input'> & {
    /** A file path, or (for the demo) the input itself. */
    input: string | Record<string, unknown>;
    /** Print nothing on success (the caller shows the report). */
    quiet?: boolean;
  },
): Promise<CalibrationReport> {
  const { readOutcome, startTwinCalibration, withTwinTarget } = await harness();
  const given = typeof opts.input === 'string' ? await readInputFile(opts.input) : { ...opts.input };
  if (opts.strategy !== undefined) given.plan = { ...(given.plan as object | undefined), strategy: opts.strategy };
  const raw = withTwinTarget(given, state);
  // Refuse a bad input here with the same message ValidateInput would give, before anything starts.
  const input = parseCalibrationInput(raw);
  const executionName = opts.executionName ?? defaultExecutionName(input.target.deployment, systemClock.now());
  const progress = new Progress(
    input,
    twinMetricsSource({ prometheusUrl: input.target.ampWorkspaceUrl, region: input.target.region }),
  );
  process.stderr.write(
    `Calibrating ${input.target.namespace}/${input.target.deployment} on the twin (execution ${executionName}, strategy ${input.plan.strategy})\n`,
  );
  const calibration = await startTwinCalibration(state, {
    input: raw,
    executionName,
    reportsDir: resolve(opts.out ?? `calibration-${executionName}`),
    ...(opts.verbose ? { logger: new Logger({ serviceName: 'calibration' }) } : {}),
    onEvent: (event) => progress.onEvent(event),
  });
  const stop = () => calibration.run.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let outcome;
  try {
    outcome = await calibration.run.result;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    progress.stop();
    calibration.close();
  }
  const { report, stored } = await readOutcome(outcome);
  if (opts.json) printJson(report);
  else if (!opts.quiet) process.stdout.write(`${stored.summary}\n`);
  return report;
}

/** Progress on stderr: one line per phase, and a live bar per load step (queue and p95 read from Prometheus). */
class Progress {
  readonly #input: CalibrationInput;
  readonly #source: MetricsSource;
  #ticker: NodeJS.Timeout | undefined;
  #reported = new Set<string>();

  constructor(input: CalibrationInput, source: MetricsSource) {
    this.#input = input;
    this.#source = source;
  }

  onEvent(event: WorkflowEvent): void {
    if (event.type === 'StateEntered') {
      const name = event.state.name;
      // One bar per load step: from its start to its measurement, across the WatchLoadStep/HoldStep loop.
      if (name === 'StartLoadStep') this.#startHold(event.state.input as { plan?: HoldPlan });
      else if (name === 'AwaitStepData' || name === 'MeasureStep') this.stop(true);
      else if (['Deploy', 'StartWarmup', 'Analyze', 'StoreReport', 'Cleanup', 'CleanupAfterFailure'].includes(name))
        line(`• ${name}`);
    } else if (event.type === 'StateExited') {
      const output = event.state.output as Record<string, unknown> | undefined;
      if (event.state.name === 'WatchLoadStep') {
        const watch = output?.watch as
          { status?: string; reason?: string; ending?: { evidence?: string } | null } | undefined;
        if (watch?.status === 'ended') {
          this.stop(true);
          // The evidence: k6's live metrics (no lag) or AMP's queue.
          const evidence = watch.ending?.evidence === undefined ? '' : ` (${watch.ending.evidence})`;
          line(`  ended early${evidence}: ${watch.reason ?? ''}`);
        }
      }
      if (event.state.name === 'CheckRollout')
        this.#once(
          'rollout',
          output?.rollout,
          (r: { done: boolean; reason: string }) => r.done && `  rollout done: ${r.reason}`,
        );
      if (event.state.name === 'ReadinessGate')
        this.#once(
          'ready',
          output?.readiness,
          (r: { ready: boolean; reasons: string[] }) => r.ready && `  ready: ${r.reasons.join('; ')}`,
        );
      if (event.state.name === 'AwaitStepData') {
        const look = output?.stepData as { status?: string; looks?: number; reason?: string } | undefined;
        // Once per step: the first look that has to wait says why (AMP's ingestion lag); the step line says how long.
        if (look?.status === 'waiting' && look.looks === 1) line(`  ${look.reason ?? ''}`);
      }
      if (event.state.name === 'MeasureStep') {
        const steps = (output?.steps ?? []) as StepMeasurement[];
        const step = steps[steps.length - 1];
        if (step) line(`  ${stepLine(step)}`);
      }
    } else if (event.type === 'StateRetried') {
      line(`  ${event.state.name}: retrying (attempt ${event.retry.attempt})`);
    } else if (event.type === 'StateFailed' && event.state.type !== 'Fail') {
      line(`  ${event.state.name} failed: ${event.Error}`);
    }
  }

  stop(done = false): void {
    if (this.#ticker === undefined) return;
    clearInterval(this.#ticker);
    this.#ticker = undefined;
    if (done) writeProgress(process.stderr, this.#bar(1), true);
  }

  #once<T>(key: string, value: unknown, text: (value: T) => string | false): void {
    if (value === null || value === undefined || this.#reported.has(key)) return;
    const message = text(value as T);
    if (message === false) return;
    this.#reported.add(key);
    line(message);
  }

  #plan: HoldPlan | undefined;
  #startedMs = 0;
  #live = '';

  #startHold(state: { plan?: HoldPlan }): void {
    this.stop();
    this.#plan = state.plan;
    this.#startedMs = Date.now();
    this.#live = '';
    const queries = stepQueries(calibrationTarget(this.#input), LIVE_WINDOW_SECONDS);
    let busy = false;
    this.#ticker = setInterval(() => {
      writeProgress(process.stderr, this.#bar(0));
      if (busy) return;
      busy = true;
      void Promise.all([this.#source.instant(queries.queue), this.#source.instant(queries.p95E2e)])
        .then(([queue, p95]) => {
          this.#live = liveHoldText(queries, queue, p95);
        })
        .catch((error: unknown) => {
          this.#live = `(Prometheus: ${(error as Error).message.slice(0, 60)})`;
        })
        .finally(() => {
          busy = false;
        });
    }, LIVE_REFRESH_MS);
    this.#ticker.unref();
  }

  #bar(minimum: number): string {
    const plan = this.#plan;
    if (plan === undefined) return '';
    const fraction = Math.max(minimum, (Date.now() - this.#startedMs) / 1000 / plan.holdSeconds);
    const of = this.#input.plan.strategy === 'linear' ? `/${this.#input.plan.rates.length}` : '';
    return progressBar(fraction, `step ${plan.index + 1}${of} · ${formatNumber(plan.rateRps)} req/s · ${this.#live}`);
  }
}

/**
 * The hold's live figures for the progress line: the queue and the trailing p95, each one series (>= 0) through the
 * shared AMP answer guard. An answer it refuses is shown in place of the figures, never drawn as a number; the run
 * goes on (a display concern: MeasureStep judges the step on its own reading).
 */
export function liveHoldText(
  queries: Pick<StepQueries, 'queue' | 'p95E2e'>,
  queue: readonly InstantSample[],
  p95: readonly InstantSample[],
): string {
  try {
    const q = guardSingleValue(queue, VALUE_DOMAIN.nonNegative, queries.queue);
    const p = guardSingleValue(p95, VALUE_DOMAIN.nonNegative, queries.p95E2e);
    return `queue ${q === undefined ? '-' : formatNumber(q)} · p95 ${p === undefined ? '-' : `${formatNumber(p)} s`}`;
  } catch (error) {
    if (!isRefusedAnswer(error)) throw error;
    return `(AMP answer refused: ${error.name}: ${error.message.slice(0, 80)})`;
  }
}

interface HoldPlan {
  index: number;
  rateRps: number;
  holdSeconds: number;
}

function stepLine(step: StepMeasurement): string {
  const p95 = step.amp.p95E2eSeconds === null ? '-' : `${formatNumber(step.amp.p95E2eSeconds)} s`;
  const verdict = step.verdict.saturated ? `SATURATED (${step.verdict.reasons[0] ?? ''})` : 'stable';
  const ingestion =
    step.ingestion === undefined
      ? ''
      : ` (measured ${formatNumber(step.ingestion.waitedSeconds)} s after the window, once AMP held it)`;
  return `step ${step.index + 1}: ${formatNumber(step.rateRps)} req/s → completed ${formatNumber(step.amp.completedRps)}/s, queue max ${formatNumber(step.amp.queueMax)}, p95 ${p95}: ${verdict}${ingestion}`;
}

function line(text: string): void {
  process.stderr.write(`${text}\n`);
}

/**
 * `--aws`: StartExecution, then GetExecutionHistory until the execution ends: one target with the local run's progress
 * display, many with a line per state entered.
 */
async function calibrateOnAws(opts: LocalOptions, given: Record<string, unknown>): Promise<void> {
  const arn = opts.stateMachineArn;
  const match = /^arn:aws[a-z-]*:states:([a-z0-9-]+):\d{12}:stateMachine:[A-Za-z0-9_-]+$/.exec(arn ?? '');
  if (arn === undefined || match === null)
    throw new CalibrateCommandError(
      `--state-machine-arn ${arn === undefined ? 'is required with --aws' : `"${arn}" is not a state machine ARN`}; accepted: arn:aws:states:<region>:<account>:stateMachine:<name>`,
    );
  const region = opts.region ?? match[1];
  const many = isBatchInput(given);
  const raw = many ? batchWithStrategy(given, opts.strategy) : withStrategy(given, opts.strategy);
  // Refused here with the message ValidateInput / ValidateTargets would give, before the execution starts.
  const single = many ? undefined : parseCalibrationInput(raw);
  if (many) parseCalibrationBatchInput(raw);
  const name = opts.executionName ?? defaultExecutionName(single?.target.deployment ?? 'batch', systemClock.now());
  const sfn = new SFNClient({ region });
  // One target: the local run's display, fed from the execution history (the live bar reads the target's AMP with
  // the user's credentials). Many: one line per state and per target.
  const progress =
    single === undefined
      ? undefined
      : new Progress(
          single,
          new HttpMetricsSource({ endpoint: single.target.ampWorkspaceUrl, region: single.target.region }),
        );
  const history = new AwsHistoryEvents();
  const show = (event: HistoryEvent) => {
    const mapped = progress === undefined ? undefined : history.next(event);
    if (mapped !== undefined) progress?.onEvent(mapped);
    else if (progress === undefined || event.type === 'ExecutionFailed' || event.type === 'ExecutionSucceeded')
      printAwsEvent(event);
  };
  try {
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: arn, name, input: JSON.stringify(raw) }),
    );
    if (executionArn === undefined)
      throw executionFailure('States.Runtime', 'StartExecution returned no execution ARN');
    process.stderr.write(`Started ${executionArn}\n`);
    // GetExecutionHistory has no "since": each poll reads the history again and prints the events not yet printed.
    let printed = 0;
    for (;;) {
      let nextToken: string | undefined;
      do {
        const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, nextToken, maxResults: 500 }));
        for (const event of page.events ?? [])
          if ((event.id ?? 0) > printed) {
            show(event);
            printed = event.id ?? printed;
          }
        nextToken = page.nextToken;
      } while (nextToken !== undefined);
      const execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
      if (execution.status === 'RUNNING') {
        await new Promise((done) => setTimeout(done, AWS_POLL_MS));
        continue;
      }
      if (execution.status === 'SUCCEEDED' && many) {
        const output = JSON.parse(execution.output ?? '{}') as { batchReport?: StoredBatchReport };
        if (opts.json) return printJson(output.batchReport ?? output);
        process.stdout.write(`${output.batchReport?.summary ?? 'calibration succeeded (no combined report)'}\n`);
        if ((output.batchReport?.failed ?? 0) > 0)
          throw executionFailure(
            'CalibrationTargetsFailedError',
            `${output.batchReport?.failed} target(s) failed (see the summary above)`,
          );
        return;
      }
      if (execution.status === 'SUCCEEDED') {
        const output = JSON.parse(execution.output ?? '{}') as { report?: StoredReport };
        if (opts.json) return printJson(output.report ?? output);
        process.stdout.write(`${output.report?.summary ?? 'calibration succeeded (no report in the output)'}\n`);
        return;
      }
      throw executionFailure(
        execution.error ?? `Execution${execution.status ?? 'Failed'}`,
        execution.cause ?? `the execution ended ${execution.status ?? 'without a status'}`,
      );
    }
  } finally {
    progress?.stop();
    sfn.destroy();
  }
}

/** One line per state entered, task failure and outcome. */
function printAwsEvent(event: HistoryEvent): void {
  const time = event.timestamp?.toISOString().slice(11, 19) ?? '';
  if (event.type === 'TaskStateEntered' || event.type === 'ChoiceStateEntered' || event.type === 'WaitStateEntered')
    line(`${time} → ${event.stateEnteredEventDetails?.name ?? ''}`);
  else if (event.type === 'LambdaFunctionFailed' || event.type === 'TaskFailed')
    line(
      `${time}   failed: ${event.lambdaFunctionFailedEventDetails?.error ?? event.taskFailedEventDetails?.error ?? ''}`,
    );
  else if (event.type === 'MapIterationStarted')
    line(`${time} → target ${(event.mapIterationStartedEventDetails?.index ?? 0) + 1} started`);
  else if (event.type === 'MapIterationSucceeded')
    line(`${time}   target ${(event.mapIterationSucceededEventDetails?.index ?? 0) + 1} ended`);
  else if (event.type === 'ExecutionFailed') line(`${time} ✗ ${event.executionFailedEventDetails?.error ?? ''}`);
  else if (event.type === 'ExecutionSucceeded') line(`${time} ✓ succeeded`);
}

interface RollbackOptions {
  stateFile?: string;
  execution?: string;
  dryRun?: boolean;
  json?: boolean;
}

/**
 * `vllm-pilot calibrate rollback`: restores the twin's target thresholds from its calibration history (the rollback
 * Lambda's code; on AWS invoke that Lambda: docs/calibration.md, "Rolling back").
 */
function registerRollbackCommand(calibrate: Command): void {
  calibrate
    .command('rollback')
    .description(
      "restore a target's ScaledObject thresholds from its calibration history: the previous values, or a named execution's",
    )
    // `calibrate` has its own --state-file, which commander gives the parent wherever it stands: both are read.
    .option('--state-file <file>', 'the twin of this state file (on AWS: invoke the rollback Lambda)')
    .option(
      '--execution <name>',
      'restore the thresholds this execution derived (default: undo the last change)',
      executionNameOption,
    )
    .option('--dry-run', 'only show what would change')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  vllm-pilot calibrate rollback --state-file twin.json --dry-run',
        '  vllm-pilot calibrate rollback --state-file twin.json --execution calib-vllm-inference-app-20261203T071922',
        '  aws lambda invoke --function-name vllm-eks-pilot-prod-calibrationRollback --cli-binary-format raw-in-base64-out \\',
        '    --payload \'{"target":{"cluster":"ai-eks","region":"us-east-2","namespace":"default","deployment":"vllm-inference-app"}}\' out.json',
      ].join('\n'),
    )
    .action(async (opts: RollbackOptions) => {
      const stateFile = opts.stateFile ?? calibrate.opts<{ stateFile?: string }>().stateFile;
      if (stateFile === undefined)
        throw new CalibrateCommandError(
          'calibrate rollback needs --state-file (the twin); on AWS invoke the rollback Lambda (see --help)',
        );
      const { rollbackOnTwin } = await harness();
      const result = await rollbackOnTwin(await readTwinState(stateFile), {
        ...(opts.execution === undefined ? {} : { execution: opts.execution }),
        dryRun: opts.dryRun ?? false,
      });
      if (opts.json) return printJson(result);
      const to =
        result.restoredFrom === null ? `the values from before it` : `the thresholds of ${result.restoredFrom}`;
      const verb = result.applied ? 'rolled back' : 'would roll back (dry run)';
      process.stdout.write(
        `${verb} ${result.scaledObject.namespace}/${result.scaledObject.name}: undid ${result.undid}, restored ${to}` +
          `${result.recorded === null ? '' : ` (history record ${result.recorded})`}\n` +
          `${result.diff === '' ? '(no change: the values are already those)' : result.diff}\n`,
      );
    });
}
