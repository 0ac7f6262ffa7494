import { describe, expect, it } from '@jest/globals';
import { systemClock } from '../../clock/index.js';
import { silentLogger } from '../../log/index.js';
import { parseCalibrationInput } from '../input.js';
import type { StepMeasurement } from '../types.js';
import { planNextStep } from './planNextStep.js';

const ports = { clock: systemClock, logger: silentLogger };
const execution = { id: 'arn:aws:states:us-east-2:1:execution:m:run', name: 'run', startTime: '2026-01-01T00:00:00Z' };
const input = parseCalibrationInput({
  target: {
    cluster: 'prod',
    region: 'us-east-2',
    namespace: 'default',
    deployment: 'vllm',
    model: 'm',
    ampWorkspaceUrl: 'http://127.0.0.1:9090',
  },
  plan: { rates: [10, 20], holdSeconds: 4.5, restSeconds: 2.2 },
});

function measured(index: number, rateRps: number, saturated: boolean): StepMeasurement {
  return { index, rateRps, holdSeconds: 5, verdict: { saturated, reasons: [] } } as unknown as StepMeasurement;
}

describe('Function: planNextStep', () => {
  it('plans the first rate with no rest before it, and whole-second waits', () => {
    // Act
    const plan = planNextStep(ports, { input, execution, steps: [] });

    // Assess
    expect(plan).toMatchObject({ done: false, index: 0, rateRps: 10, holdWaitSeconds: 5, restWaitSeconds: 0 });
  });

  it('rests before the next step', () => {
    // Act
    const plan = planNextStep(ports, { input, execution, steps: [measured(0, 10, false)] });

    // Assess
    expect(plan).toMatchObject({ done: false, index: 1, rateRps: 20, restWaitSeconds: 3 });
  });

  it('ends the plan after a saturated step, with the reason', () => {
    // Act
    const plan = planNextStep(ports, { input, execution, steps: [measured(0, 10, true)] });

    // Assess
    expect(plan).toEqual({ done: true, index: 1, reason: 'step 1 at 10 req/s saturated' });
  });
});
