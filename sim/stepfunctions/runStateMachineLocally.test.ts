import { describe, expect, it } from '@jest/globals';
import {
  WorkflowHandlerMissingError,
  WorkflowHandlerUnknownStateError,
  WorkflowOptionInvalidError,
  WorkflowSubstitutionMissingError,
} from './errors.js';
import { runStateMachineLocally } from './runStateMachineLocally.js';
import type { AslDefinition, LocalTaskHandler, WorkflowEvent } from './types.js';

const FN = (name: string) => `\${${name}FunctionArn}`;
const ARNS = {
  WorkFunctionArn: 'arn:aws:lambda:us-east-2:000000000000:function:work',
  CleanFunctionArn: 'arn:aws:lambda:us-east-2:000000000000:function:clean',
};

/** Work (retried on a transient error, caught otherwise) → Clean on failure → Fail with the original error. */
const retryAndCatch: AslDefinition = {
  StartAt: 'Work',
  States: {
    Work: {
      Type: 'Task',
      Resource: FN('Work'),
      ResultPath: '$.work',
      Retry: [{ ErrorEquals: ['CalibrationDependencyUnavailableError'], IntervalSeconds: 2, MaxAttempts: 3 }],
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Clean' }],
      Next: 'Done',
    },
    Clean: {
      Type: 'Task',
      Resource: FN('Clean'),
      ResultPath: '$.cleanup',
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.cleanupError', Next: 'Failed' }],
      Next: 'Failed',
    },
    Done: { Type: 'Succeed' },
    Failed: { Type: 'Fail', ErrorPath: '$.error.Error', CausePath: '$.error.Cause' },
  },
};

function namedError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

function run(
  definition: AslDefinition,
  handlers: Record<string, LocalTaskHandler>,
  extra: Partial<Parameters<typeof runStateMachineLocally>[0]> = {},
) {
  return runStateMachineLocally({
    definition,
    handlers,
    input: { hello: 'world' },
    substitutions: ARNS,
    executionName: 'exec-1',
    retryIntervalOverrides: { Work: 0 },
    ...extra,
  });
}

describe('Function: runStateMachineLocally', () => {
  it('refuses to run when a Task state has no local handler, naming every such state', () => {
    // Prepare
    const calls: string[] = [];

    // Act
    const act = () => run(retryAndCatch, { Work: () => Promise.resolve(calls.push('Work')) });

    // Assess
    expect(act).toThrow(WorkflowHandlerMissingError);
    expect(act).toThrow(/Clean/);
    expect(calls).toEqual([]);
  });

  it('refuses a handler for a state the definition does not have', () => {
    // Act
    const act = () =>
      run(retryAndCatch, {
        Work: () => Promise.resolve(1),
        Clean: () => Promise.resolve(1),
        Wrok: () => Promise.resolve(1),
      });

    // Assess
    expect(act).toThrow(WorkflowHandlerUnknownStateError);
    expect(act).toThrow(/Wrok.*accepted: Work, Clean/);
  });

  it('refuses a definition whose placeholders have no substitution, listing them', () => {
    // Act
    const act = () =>
      run(retryAndCatch, { Work: () => Promise.resolve(1), Clean: () => Promise.resolve(1) }, { substitutions: {} });

    // Assess
    expect(act).toThrow(WorkflowSubstitutionMissingError);
    expect(act).toThrow(/CleanFunctionArn, WorkFunctionArn/);
  });

  it.each([
    { case: 'negative', waitScale: -1 },
    { case: 'above 1', waitScale: 2 },
    { case: 'not a number', waitScale: Number.NaN },
  ])('refuses a waitScale that is $case', ({ waitScale }) => {
    // Act
    const act = () =>
      run(retryAndCatch, { Work: () => Promise.resolve(1), Clean: () => Promise.resolve(1) }, { waitScale });

    // Assess
    expect(act).toThrow(WorkflowOptionInvalidError);
  });

  it('retries an error the Retry names and succeeds, reporting each retry as an event', async () => {
    // Prepare
    let attempts = 0;
    const handlers = {
      Work: () => {
        attempts += 1;
        if (attempts < 3)
          return Promise.reject(namedError('CalibrationDependencyUnavailableError', 'AMP did not answer'));
        return Promise.resolve({ attempts });
      },
      Clean: () => Promise.resolve({ cleaned: true }),
    };

    // Act
    const execution = run(retryAndCatch, handlers);
    const outcome = await execution.result;

    // Assess
    expect(outcome.status).toBe('succeeded');
    expect(outcome.status === 'succeeded' && outcome.output).toEqual({ hello: 'world', work: { attempts: 3 } });
    expect(execution.events.filter((e) => e.type === 'StateRetried').length).toBe(2);
  });

  it('fails with the original error and cause after the failure path ran, even when the cleanup fails too', async () => {
    // Prepare
    const cleaned: unknown[] = [];
    const handlers = {
      Work: () => Promise.reject(namedError('CalibrationRolloutTimeoutError', 'the rollout did not finish within 1 s')),
      Clean: (input: unknown) => {
        cleaned.push(input);
        return Promise.reject(namedError('KubeForbiddenError', 'cannot delete jobs'));
      },
    };

    // Act
    const outcome = await run(retryAndCatch, handlers).result;

    // Assess
    expect(outcome).toMatchObject({
      status: 'failed',
      error: 'CalibrationRolloutTimeoutError',
      cause: 'the rollout did not finish within 1 s',
    });
    expect(cleaned).toEqual([
      {
        hello: 'world',
        error: { Error: 'CalibrationRolloutTimeoutError', Cause: 'the rollout did not finish within 1 s' },
      },
    ]);
  });

  it('gives the states a Context Object with the execution name, ARN and start time', async () => {
    // Prepare
    const definition: AslDefinition = {
      StartAt: 'Who',
      States: {
        Who: {
          Type: 'Pass',
          Parameters: {
            'name.$': '$$.Execution.Name',
            'id.$': '$$.Execution.Id',
            'startTime.$': '$$.Execution.StartTime',
            'input.$': '$$.Execution.Input',
          },
          End: true,
        },
      },
    };

    // Act
    const execution = run(definition, {}, { executionName: 'calib-demo-1' });
    const outcome = await execution.result;

    // Assess
    expect(outcome.status === 'succeeded' && outcome.output).toEqual({
      name: 'calib-demo-1',
      id: 'arn:aws:states:us-east-2:000000000000:execution:vllm-pilot-calibration:calib-demo-1',
      startTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      input: { hello: 'world' },
    });
    expect(execution.executionArn).toBe(
      'arn:aws:states:us-east-2:000000000000:execution:vllm-pilot-calibration:calib-demo-1',
    );
  });

  it('hands handlers and the next states plain JSON, as Lambda would', async () => {
    // Prepare
    const definition: AslDefinition = {
      StartAt: 'Work',
      States: { Work: { Type: 'Task', Resource: FN('Work'), ResultPath: '$.work', End: true } },
    };
    const handlers = { Work: () => Promise.resolve({ at: new Date(0), skipped: undefined, n: 1 }) };

    // Act
    const outcome = await run(definition, handlers).result;

    // Assess
    expect(outcome.status === 'succeeded' && outcome.output).toEqual({
      hello: 'world',
      work: { at: '1970-01-01T00:00:00.000Z', n: 1 },
    });
  });

  it('scales a poll Wait read from a Task result by waitScale (an hour-long poll ends at once with 0)', async () => {
    // Prepare
    const definition: AslDefinition = {
      StartAt: 'Check',
      States: {
        Check: { Type: 'Task', Resource: FN('Work'), ResultPath: '$.check', Next: 'Poll' },
        Poll: { Type: 'Wait', SecondsPath: '$.check.waitSeconds', Next: 'Done' },
        Done: { Type: 'Succeed' },
      },
    };

    // Act
    const outcome = await run(definition, { Check: () => Promise.resolve({ waitSeconds: 3600 }) }, { waitScale: 0 })
      .result;

    // Assess
    expect(outcome.status).toBe('succeeded');
  });

  it('never scales the hold Wait: the load step lasts its full hold', async () => {
    // Prepare
    const definition: AslDefinition = {
      StartAt: 'HoldStep',
      States: { HoldStep: { Type: 'Wait', Seconds: 1, End: true } },
    };
    const seen: WorkflowEvent[] = [];

    // Act
    const outcome = await run(definition, {}, { waitScale: 0, onEvent: (e) => seen.push(e) }).result;

    // Assess
    expect(outcome.status).toBe('succeeded');
    const entered = seen.find((e) => e.type === 'StateEntered')?.timestamp ?? 0;
    const exited = seen.find((e) => e.type === 'StateExited')?.timestamp ?? 0;
    expect(exited - entered).toBeGreaterThanOrEqual(990);
  });

  it('streams every event to onEvent in order and keeps them on the run', async () => {
    // Prepare
    const seen: string[] = [];

    // Act
    const execution = run(
      retryAndCatch,
      { Work: () => Promise.resolve({ ok: true }), Clean: () => Promise.resolve({}) },
      { onEvent: (e) => seen.push(e.type === 'StateEntered' ? `enter ${e.state.name}` : e.type) },
    );
    await execution.result;

    // Assess
    expect(seen).toEqual([
      'ExecutionStarted',
      'enter Work',
      'StateExited',
      'enter Done',
      'StateExited',
      'ExecutionSucceeded',
    ]);
    expect(execution.events.map((e) => e.type)).toEqual([
      'ExecutionStarted',
      'StateEntered',
      'StateExited',
      'StateEntered',
      'StateExited',
      'ExecutionSucceeded',
    ]);
  });
});
