import { describe, expect, it } from '@jest/globals';
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { AwsHistoryEvents } from './awsHistory.js';

// GetExecutionHistory's events, shaped as Step Functions returns them (JSON text for input and output, the state's
// kind in the event type), read as the local runner's events that the progress display consumes.

const at = new Date('2026-12-04T10:00:00Z');

function entered(id: number, kind: string, name: string, input: unknown): HistoryEvent {
  return {
    id,
    timestamp: at,
    type: `${kind}StateEntered`,
    stateEnteredEventDetails: { name, input: JSON.stringify(input) },
  } as HistoryEvent;
}

function exited(id: number, kind: string, name: string, output: unknown): HistoryEvent {
  return {
    id,
    timestamp: at,
    type: `${kind}StateExited`,
    stateExitedEventDetails: { name, output: JSON.stringify(output) },
  } as HistoryEvent;
}

describe('AwsHistoryEvents', () => {
  it('reads entered and exited states with their kind, input and parsed output', () => {
    // Arrange
    const reader = new AwsHistoryEvents();
    const steps = [{ index: 0, rateRps: 10 }];

    // Act
    const events = [
      entered(2, 'Task', 'MeasureStep', { plan: { index: 0 } }),
      exited(5, 'Task', 'MeasureStep', { steps }),
      entered(6, 'Choice', 'MoreSteps', { steps }),
    ].map((event) => reader.next(event));

    // Assess
    expect(events).toEqual([
      {
        type: 'StateEntered',
        timestamp: at.getTime(),
        state: { name: 'MeasureStep', type: 'Task', input: { plan: { index: 0 } } },
      },
      {
        type: 'StateExited',
        timestamp: at.getTime(),
        state: { name: 'MeasureStep', type: 'Task', input: { plan: { index: 0 } }, output: { steps } },
      },
      { type: 'StateEntered', timestamp: at.getTime(), state: { name: 'MoreSteps', type: 'Choice', input: { steps } } },
    ]);
  });

  it('names the state a Lambda failure happened in, with its error and cause', () => {
    // Arrange
    const reader = new AwsHistoryEvents();
    reader.next(entered(2, 'Task', 'Deploy', {}));

    // Act
    const failed = reader.next({
      id: 4,
      timestamp: at,
      type: 'LambdaFunctionFailed',
      lambdaFunctionFailedEventDetails: { error: 'KubeForbiddenError', cause: 'forbidden' },
    });

    // Assess
    expect(failed).toEqual({
      type: 'StateFailed',
      timestamp: at.getTime(),
      state: { name: 'Deploy', type: 'Task', input: {} },
      Error: 'KubeForbiddenError',
      Cause: 'forbidden',
    });
  });

  it('passes over the events the display does not show', () => {
    // Arrange
    const reader = new AwsHistoryEvents();

    // Act
    const shown = [
      'ExecutionStarted',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
    ].map((type, id) => reader.next({ id, timestamp: at, type } as HistoryEvent));

    // Assess
    expect(shown).toEqual([undefined, undefined, undefined, undefined]);
  });
});
