import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  StateMachine,
  type StateMachineDefinition,
} from 'aws-local-stepfunctions';
import { systemClock } from '../../shared/clock/index.js';
import { allStates, taskStates } from './definition.js';
import { WorkflowDefinitionInvalidError, WorkflowOptionInvalidError } from './errors.js';
import { checkLocalHandlers } from './localHandlers.js';
import { ensurePromiseWithResolvers } from './promiseWithResolvers.js';
import { substituteDefinition } from './substitute.js';
import type { LocalRun, LocalTaskHandler, RunLocallyOptions, WorkflowEvent, WorkflowOutcome } from './types.js';

/** Wait states whose duration is the measurement itself: `waitScale` leaves them alone unless told otherwise. */
export const DEFAULT_FIXED_WAITS = ['HoldStep'] as const;

/**
 * Runs a state machine definition (the calibration's) locally with aws-local-stepfunctions: the
 * `${...}` placeholders substituted, every Task state served by its local handler (refused when one is missing), a
 * Context Object with Execution.Id/Name/StartTime/Input, and every event streamed to `onEvent`. Handlers get and
 * return JSON exactly as a Lambda would (their results are serialised), and throw errors whose `name` the
 * definition's Retry and Catch match.
 */
export function runStateMachineLocally(options: RunLocallyOptions): LocalRun {
  ensurePromiseWithResolvers();
  const clock = options.clock ?? systemClock;
  const waitScale = options.waitScale ?? 1;
  if (!(Number.isFinite(waitScale) && waitScale >= 0 && waitScale <= 1))
    throw new WorkflowOptionInvalidError('waitScale', `is ${waitScale}`, 'a number from 0 to 1');
  checkLocalHandlers(options.definition, options.handlers);
  const definition = substituteDefinition(options.definition, options.substitutions);

  // Wait durations for waitScale: a Wait's SecondsPath reads what the last Task writing that ResultPath returned.
  const lastResults = new Map<string, unknown>();
  const resultPathOf = new Map(
    allStates(definition).map(({ name, state }) => [
      name,
      typeof state.ResultPath === 'string' ? state.ResultPath : '$',
    ]),
  );
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const { name } of taskStates(definition)) {
    const handler = options.handlers[name] as LocalTaskHandler;
    handlers[name] = async (input: unknown) => {
      // What a Lambda receives and returns is JSON: copying both ways keeps local runs honest about it.
      const output = toJson(await handler(toJson(input)));
      lastResults.set(resultPathOf.get(name) ?? '$', output);
      return output;
    };
  }

  let machine: StateMachine;
  try {
    machine = new StateMachine(definition as unknown as StateMachineDefinition);
  } catch (cause) {
    throw new WorkflowDefinitionInvalidError('(substituted)', (cause as Error).message, { cause });
  }
  const region = options.region ?? 'us-east-2';
  const accountId = options.accountId ?? '000000000000';
  const stateMachineName = options.stateMachineName ?? 'vllm-pilot-calibration';
  const executionArn = `arn:aws:states:${region}:${accountId}:execution:${stateMachineName}:${options.executionName}`;
  const fixedWaits = new Set<string>(options.fixedWaits ?? DEFAULT_FIXED_WAITS);
  const waits = allStates(definition).filter(({ state }) => state.Type === 'Wait');
  const waitTimeOverrides =
    waitScale === 1
      ? undefined
      : new Proxy(
          {},
          {
            get(_target, name) {
              if (typeof name !== 'string' || fixedWaits.has(name)) return undefined;
              const state = waits.find((w) => w.name === name)?.state;
              if (state === undefined) return undefined;
              const seconds = state.Seconds ?? secondsAt(state.SecondsPath, lastResults);
              return seconds === undefined ? undefined : Math.round(seconds * waitScale * 1000);
            },
          },
        );

  const startedAt = new Date(clock.now()).toISOString();
  const stateMachineArn = `arn:aws:states:${region}:${accountId}:stateMachine:${stateMachineName}`;
  LOCAL_EXECUTIONS.set(executionArn, 'RUNNING');
  const execution = machine.run(options.input as never, {
    overrides: {
      taskResourceLocalHandlers: handlers as never,
      ...(waitTimeOverrides === undefined ? {} : { waitTimeOverrides }),
      ...(options.retryIntervalOverrides === undefined
        ? {}
        : { retryIntervalOverrides: { ...options.retryIntervalOverrides } }),
    },
    context: {
      Execution: { Id: executionArn, Name: options.executionName, StartTime: startedAt, Input: options.input as never },
      StateMachine: { Id: stateMachineArn, Name: stateMachineName },
    },
  });

  const events: WorkflowEvent[] = [];
  const pumped = (async () => {
    for await (const event of execution.eventLogs) {
      events.push(event);
      try {
        options.onEvent?.(event);
      } catch {
        // A failing observer must not change the execution it observes.
      }
    }
  })();

  const result = (async (): Promise<WorkflowOutcome> => {
    let outcome: WorkflowOutcome;
    try {
      const output = await execution.result;
      outcome = { status: 'succeeded', output, startedAt, finishedAt: new Date(clock.now()).toISOString() };
    } catch (error) {
      const finishedAt = new Date(clock.now()).toISOString();
      if (error instanceof ExecutionAbortedError) outcome = { status: 'aborted', startedAt, finishedAt };
      else if (error instanceof ExecutionTimeoutError)
        outcome = {
          status: 'timedOut',
          error: 'States.Timeout',
          cause: `the execution ran longer than the definition's TimeoutSeconds (${options.definition.TimeoutSeconds ?? '?'} s)`,
          startedAt,
          finishedAt,
        };
      else if (error instanceof ExecutionError) {
        const failure = error.cause as { name?: string; message?: string } | undefined;
        outcome = {
          status: 'failed',
          error: failure?.name ?? 'States.Runtime',
          cause: failure?.message ?? error.message,
          startedAt,
          finishedAt,
        };
      } else throw error;
    }
    await pumped;
    LOCAL_EXECUTIONS.set(executionArn, STATUS_NAMES[outcome.status]);
    if (options.onStatusChange !== undefined) {
      const event = statusChangeEvent({
        executionArn,
        stateMachineArn,
        name: options.executionName,
        status: STATUS_NAMES[outcome.status],
        startedAt,
        finishedAt: outcome.finishedAt,
        input: options.input,
        region,
        accountId,
      });
      try {
        outcome.afterEnd = { result: await options.onStatusChange(event) };
      } catch (error) {
        const e = error as Error;
        outcome.afterEnd = { error: e.name, message: String(e.message).split('\n')[0] ?? '' };
      }
    }
    return outcome;
  })();

  return { result, events, executionArn, stateMachineArn, abort: () => execution.abort() };
}

/** A Wait's SecondsPath (`$.a.b`) read from the last result of the Task whose ResultPath holds it. */
function secondsAt(path: string | undefined, lastResults: ReadonlyMap<string, unknown>): number | undefined {
  if (path === undefined) return undefined;
  let best: { resultPath: string; value: unknown } | undefined;
  for (const [resultPath, value] of lastResults) {
    const covers = resultPath === '$' || path === resultPath || path.startsWith(`${resultPath}.`);
    if (covers && (best === undefined || resultPath.length > best.resultPath.length)) best = { resultPath, value };
  }
  if (best === undefined) return undefined;
  const rest = path
    .slice(best.resultPath.length)
    .split('.')
    .filter((part) => part !== '');
  let value: unknown = best.value;
  for (const key of rest)
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function toJson(value: unknown): unknown {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
}

/** Step Functions' names of the outcomes, as DescribeExecution and the status-change event give them. */
const STATUS_NAMES = {
  succeeded: 'SUCCEEDED',
  failed: 'FAILED',
  timedOut: 'TIMED_OUT',
  aborted: 'ABORTED',
} as const satisfies Record<WorkflowOutcome['status'], string>;

export type LocalExecutionStatus = 'RUNNING' | (typeof STATUS_NAMES)[keyof typeof STATUS_NAMES];

/**
 * Every local execution of this process by ARN, with its status: what DescribeExecution answers locally (the lease
 * sweep asks it whether an execution still runs).
 */
const LOCAL_EXECUTIONS = new Map<string, LocalExecutionStatus>();

/** The status of a local execution of this process; null when it never ran here (DescribeExecution's "not found"). */
export function localExecutionStatus(executionArn: string): LocalExecutionStatus | null {
  return LOCAL_EXECUTIONS.get(executionArn) ?? null;
}

/** The "Step Functions Execution Status Change" event EventBridge delivers for an execution's end. */
function statusChangeEvent(e: {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  status: LocalExecutionStatus;
  startedAt: string;
  finishedAt: string;
  input: unknown;
  region: string;
  accountId: string;
}): Record<string, unknown> {
  return {
    version: '0',
    'detail-type': 'Step Functions Execution Status Change',
    source: 'aws.states',
    account: e.accountId,
    time: e.finishedAt,
    region: e.region,
    resources: [e.executionArn],
    detail: {
      executionArn: e.executionArn,
      stateMachineArn: e.stateMachineArn,
      name: e.name,
      status: e.status,
      startDate: Date.parse(e.startedAt),
      stopDate: Date.parse(e.finishedAt),
      input: JSON.stringify(e.input ?? null),
      inputDetails: { included: true },
    },
  };
}
