import { describe, expect, it } from '@jest/globals';
import { CalibrationDependencyUnavailableError, CalibrationJobFailedError } from '../../shared/calibration/index.js';
import { CALIBRATION_STEPS, planNextStepStep, type CalibrationStep } from '../../shared/calibration/workflow/index.js';
import { systemClock } from '../../shared/clock/index.js';
import * as z from 'zod';
import { CalibrationEventInvalidError } from './errors.js';
import { bindStep } from './task.js';

const execution = { id: 'arn:aws:states:us-east-2:1:execution:m:run', name: 'run', startTime: '2026-01-01T00:00:00Z' };
const input = {
  target: {
    cluster: 'prod',
    region: 'us-east-2',
    namespace: 'default',
    deployment: 'vllm',
    model: 'm',
    ampWorkspaceUrl: 'http://127.0.0.1:9090',
  },
  plan: { rates: [10, 20], holdSeconds: 5, restSeconds: 2 },
};

/** A logger that keeps what it was told. */
function recordingLogger() {
  const lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const at =
    (level: string) =>
    (message: string, ...fields: Array<Record<string, unknown>>) => {
      lines.push({ level, message, ...(fields[0] === undefined ? {} : { fields: fields[0] }) });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A step that throws what it is given. */
function throwing(error: unknown): CalibrationStep<z.ZodObject, never, { logger: ReturnType<typeof recordingLogger> }> {
  return {
    name: 'probe',
    label: 'Probe',
    placeholder: 'ProbeFunctionArn',
    event: z.object({}),
    run: () => {
      throw error;
    },
  };
}

describe('Function: bindStep', () => {
  it('runs the step on the parsed event (defaults filled in by the input schema)', async () => {
    // Prepare
    const task = bindStep(planNextStepStep, { clock: systemClock, logger: recordingLogger() });

    // Act
    const plan = await task({ input, execution, steps: [] });

    // Assess
    expect(plan).toMatchObject({ done: false, index: 0, rateRps: 10, holdWaitSeconds: 5, restWaitSeconds: 0 });
  });

  it('refuses an event without a field its state passes, naming the state and the field', async () => {
    // Prepare
    const logger = recordingLogger();
    const task = bindStep(planNextStepStep, { clock: systemClock, logger });

    // Act
    const run = task({ input, execution });

    // Assess
    await expect(run).rejects.toThrow(CalibrationEventInvalidError);
    await expect(run).rejects.toThrow(/^PlanNextStep: invalid event: event\.steps: /);
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: 'error', message: 'planNextStep failed' }));
  });

  it('refuses a done plan at StartLoadStep with the reason, before touching the cluster', async () => {
    // Prepare
    const ports = { clock: systemClock, logger: recordingLogger(), cluster: () => Promise.reject(new Error('no')) };
    const task = bindStep(CALIBRATION_STEPS.startLoadStep, ports);

    // Act
    const run = task({ input, execution, deployment: {}, warmup: {}, plan: { done: true, reason: 'x', index: 2 } });

    // Assess
    await expect(run).rejects.toThrow(/event\.plan\.done: is true: no step to start/);
  });

  it.each([
    { case: 'an error flagged retryable', error: Object.assign(new Error('API server 503'), { retryable: true }) },
    { case: 'an AWS SDK server fault', error: Object.assign(new Error('S3 InternalError'), { $fault: 'server' }) },
  ])('turns $case into CalibrationDependencyUnavailableError, which the state machine retries', async ({ error }) => {
    // Prepare
    const task = bindStep(throwing(error), { logger: recordingLogger() });

    // Act
    const run = task({});

    // Assess
    await expect(run).rejects.toThrow(CalibrationDependencyUnavailableError);
    await expect(run).rejects.toThrow(`probe: Error: ${error.message}`);
  });

  it('keeps a calibration error and an error that is not transient as they are', async () => {
    // Prepare
    const failed = new CalibrationJobFailedError('load Job default/x failed');
    const refused = Object.assign(new Error('forbidden'), { name: 'KubeForbiddenError', retryable: false });

    // Act
    const first = bindStep(throwing(failed), { logger: recordingLogger() })({});
    const second = bindStep(throwing(refused), { logger: recordingLogger() })({});

    // Assess
    await expect(first).rejects.toBe(failed);
    await expect(second).rejects.toBe(refused);
  });
});
