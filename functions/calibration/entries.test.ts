import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CALIBRATION_STEPS, type CalibrationStepName } from '../../shared/calibration/workflow/index.js';
import { lambdaContext } from '../../sim/harness/index.js';
import { CalibrationEventInvalidError } from './errors.js';

// Each calibration function's entry file (the handler string `functions/calibration/<step>.handler` the stack
// generates) runs its own step: an event its state would never pass is refused with that state's name.

const ENVIRONMENT = {
  AWS_REGION: 'us-east-2',
  REPORT_BUCKET: 'vllm-pilot-reports',
  HISTORY_TABLE: 'calibration-history',
  // Nothing is called: the event is refused before any port is used.
  EKS_ENDPOINT: 'http://127.0.0.1:9',
  S3_ENDPOINT: 'http://127.0.0.1:9',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
};
const saved = { ...process.env };

beforeAll(() => {
  Object.assign(process.env, ENVIRONMENT);
});

afterAll(() => {
  for (const key of Object.keys(ENVIRONMENT)) delete process.env[key];
  Object.assign(process.env, saved);
});

describe('Files: functions/calibration/<step>.ts', () => {
  it.each(Object.keys(CALIBRATION_STEPS) as CalibrationStepName[])(
    '%s.ts runs its own step: an empty event is refused, naming that state',
    async (name) => {
      // Prepare
      const { handler } = (await import(`./${name}.js`)) as {
        handler: (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;
      };

      // Act
      const run = handler({}, lambdaContext(`calibration-${name}`));

      // Assess
      await expect(run).rejects.toThrow(CalibrationEventInvalidError);
      await expect(run).rejects.toThrow(new RegExp(`^${CALIBRATION_STEPS[name].label}: invalid event: event\\.`));
    },
  );
});

describe('File: functions/calibration/cleanupEndedExecution.ts', () => {
  it('refuses an event that is not a Step Functions status change, naming the field', async () => {
    // Prepare
    const { handler } = (await import('./cleanupEndedExecution.js')) as {
      handler: (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;
    };

    // Act
    const run = handler({ source: 'aws.events', detail: {} }, lambdaContext('calibration-cleanupEndedExecution'));

    // Assess
    await expect(run).rejects.toThrow(CalibrationEventInvalidError);
    await expect(run).rejects.toThrow(/^CleanupEndedExecution: invalid event: event\.detail-type/);
  });

  it('skips an execution that succeeded: its own Cleanup state ran', async () => {
    // Prepare
    const { handler } = (await import('./cleanupEndedExecution.js')) as {
      handler: (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;
    };
    const event = {
      'detail-type': 'Step Functions Execution Status Change',
      source: 'aws.states',
      detail: { executionArn: 'arn:aws:states:us-east-2:1:execution:m:e1', name: 'e1', status: 'SUCCEEDED' },
    };

    // Act
    const result = await handler(event, lambdaContext('calibration-cleanupEndedExecution'));

    // Assess
    expect(result).toEqual({ execution: 'e1', status: 'SUCCEEDED', skipped: expect.stringContaining('own Cleanup') });
  });
});
