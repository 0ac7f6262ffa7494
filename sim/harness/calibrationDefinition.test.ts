import { describe, expect, it } from '@jest/globals';
import { SNSClient } from '@aws-sdk/client-sns';
import { StateMachine } from 'aws-local-stepfunctions';
import { bindSteps } from '../../functions/calibration/task.js';
import { CALIBRATION_STEPS } from '../../shared/calibration/workflow/index.js';
import { silentLogger } from '../../shared/log/index.js';
import {
  allStates,
  checkLocalHandlers,
  loadDefinition,
  localFunctionArns,
  placeholdersIn,
  runStateMachineLocally,
  substituteDefinition,
  taskStates,
  WorkflowHandlerMissingError,
} from '../stepfunctions/index.js';
import { calibrationLocalHandlers } from './calibration.js';

// statemachines/calibration.asl.json is a contract between the state machine and the calibration's steps.

const definition = await loadDefinition();
const FAILURE_PATH = ['CleanupAfterFailure', 'NotifyFailure', 'Failed'];
/** The many-target path: its own failure path (a refused list), and one child execution per target. */
const BATCH_PATH = ['ValidateTargets', 'CalibrateTarget', 'StoreBatchReport', 'NotifyBatch', 'NotifyBatchFailure'];
const noChild = () => Promise.reject(new Error('no child execution in this test'));

describe('File: statemachines/calibration.asl.json', () => {
  it('is accepted by aws-local-stepfunctions once its placeholders are substituted', () => {
    // Prepare
    const substituted = substituteDefinition(definition, {
      ...localFunctionArns(definition),
      CalibrationTopicArn: 'arn:aws:sns:us-east-2:000000000000:calibration',
    });

    // Act
    const act = () => new StateMachine(substituted as never);

    // Assess
    expect(act).not.toThrow();
  });

  it('calls only the calibration steps and SNS, so the local table serves every Task state', () => {
    // Prepare
    const sns = new SNSClient({ region: 'us-east-2' });

    // Act
    const table = calibrationLocalHandlers(
      definition,
      bindSteps(CALIBRATION_STEPS, { logger: silentLogger }),
      sns,
      noChild,
    );

    // Assess
    expect(() => checkLocalHandlers(definition, table)).not.toThrow();
    const placeholders = Object.values(CALIBRATION_STEPS).map((step) => step.placeholder);
    expect(placeholdersIn(definition)).toEqual([...placeholders, 'CalibrationTopicArn'].sort());
    sns.destroy();
  });

  it('sends every Task state of the main path to the failure path on any error, keeping the error in $.error', () => {
    // Act
    const main = allStates(definition).filter(
      ({ name, state }) => state.Type === 'Task' && !FAILURE_PATH.includes(name) && !BATCH_PATH.includes(name),
    );

    // Assess
    expect(main.length).toBeGreaterThan(10);
    for (const { state } of main)
      expect(state.Catch).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'CleanupAfterFailure' },
      ]);
  });

  it('retries the transient errors on every Lambda Task state with backoff and full jitter', () => {
    // Act
    const lambdas = taskStates(definition).filter((t) => t.resource.startsWith('${'));

    // Assess
    for (const { name } of lambdas) {
      const retry = (definition.States[name]?.Retry as Array<Record<string, unknown>>)[0];
      expect(retry).toMatchObject({ IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 3, JitterStrategy: 'FULL' });
      expect(retry?.ErrorEquals).toEqual(
        expect.arrayContaining([
          'CalibrationDependencyUnavailableError',
          'Lambda.ServiceException',
          'Lambda.TooManyRequestsException',
          'Lambda.SdkClientException',
        ]),
      );
    }
  });

  it('fails with the original error, not the cleanup one', () => {
    // Assess
    expect(definition.States.Failed).toMatchObject({
      Type: 'Fail',
      ErrorPath: '$.error.Error',
      CausePath: '$.error.Cause',
    });
    expect(definition.TimeoutSeconds).toBe(21600);
  });

  it('sends a many-target input to the batch path, and every batch Task state to its own failure path', () => {
    // Assess
    expect(definition.StartAt).toBe('Targets?');
    expect(definition.States['Targets?']).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.targets', IsPresent: true, Next: 'StartBatch' }],
      Default: 'Start',
    });
    for (const name of ['ValidateTargets', 'CalibrateTargets', 'StoreBatchReport'])
      expect(definition.States[name]?.Catch).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'NotifyBatchFailure' },
      ]);
  });

  it('runs each target as a child execution of itself, at most maxConcurrency at once, catching its failure', () => {
    // Act
    const map = definition.States.CalibrateTargets;
    const processor = map?.ItemProcessor;

    // Assess
    expect(map).toMatchObject({ Type: 'Map', MaxConcurrencyPath: '$.batch.maxConcurrency' });
    expect(processor?.States.CalibrateTarget).toMatchObject({
      Resource: 'arn:aws:states:::states:startExecution.sync:2',
      Parameters: { 'StateMachineArn.$': '$$.StateMachine.Id' },
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'TargetFailed' }],
    });
  });

  it("keeps a many-target execution's children quiet: the parent sends the one notification", () => {
    // Assess
    for (const [choice, quiet] of [
      ['Notify?', 'Succeeded'],
      ['NotifyFailure?', 'Failed'],
    ] as const)
      expect(definition.States[choice]).toMatchObject({
        Choices: [{ Variable: '$.input.batch', IsPresent: true, Next: quiet }],
      });
  });

  it('is refused by the local runner when a Task state has no handler, before anything runs', () => {
    // Prepare
    const sns = new SNSClient({ region: 'us-east-2' });
    const calls: string[] = [];
    const table = calibrationLocalHandlers(
      definition,
      bindSteps(CALIBRATION_STEPS, { logger: silentLogger }),
      sns,
      noChild,
    );
    const { MeasureStep: _dropped, ...incomplete } = table;
    const recording = Object.fromEntries(
      Object.entries(incomplete).map(([state, handler]) => [
        state,
        (event: unknown) => {
          calls.push(state);
          return handler(event);
        },
      ]),
    );

    // Act
    const act = () =>
      runStateMachineLocally({
        definition,
        handlers: recording,
        input: {},
        substitutions: {
          ...localFunctionArns(definition),
          CalibrationTopicArn: 'arn:aws:sns:us-east-2:000000000000:calibration',
        },
        executionName: 'calib-incomplete',
      });

    // Assess
    expect(act).toThrow(WorkflowHandlerMissingError);
    expect(act).toThrow(/MeasureStep/);
    expect(calls).toEqual([]);
    sns.destroy();
  });
});
