import { describe, expect, it } from '@jest/globals';
import { systemClock } from '../../clock/index.js';
import { silentLogger } from '../../log/index.js';
import { CalibrationStepEvidenceError } from '../errors.js';
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

describe('Function: planNextStep (a step is evidence, or it is repeated)', () => {
  const failed = (step: StepMeasurement, attempt = 1): StepMeasurement => ({
    ...step,
    evidence: { ok: false, reasons: ["AMP's last sample of Pod p is 8 s before the window's end"], attempt },
  });

  it.each([
    {
      // The newest step failed its checks for the first time: the same rate again, a new index, the reason.
      name: 'repeats a step whose evidence failed once',
      steps: [measured(0, 10, false), failed(measured(1, 20, true))],
      expected: {
        done: false,
        index: 2,
        rateRps: 20,
        reason: "repeating step 2: AMP's last sample of Pod p is 8 s before the window's end",
      },
    },
    {
      // The repeat held: the strategy sees the held steps only (10 and the repeat at 20) and goes on.
      name: 'goes on from the repeat once it held',
      steps: [measured(0, 10, false), failed(measured(1, 20, true)), measured(2, 20, false)],
      expected: { done: true, index: 3 },
    },
    {
      // A saturated verdict of a step that failed its checks does not end the plan: it is not evidence.
      name: 'ignores the verdict of a failed step',
      steps: [failed(measured(0, 10, true)), measured(1, 10, false)],
      expected: { done: false, index: 2, rateRps: 20 },
    },
    {
      // Old states carry no evidence: taken as held.
      name: 'treats a step without evidence as held',
      steps: [measured(0, 10, false)],
      expected: { done: false, index: 1, rateRps: 20 },
    },
  ])('$name', ({ steps, expected }) => {
    // Act
    const plan = planNextStep(ports, { input, execution, steps });

    // Assess
    expect(plan).toMatchObject(expected);
  });

  it('fails with CalibrationStepEvidenceError when the repeat fails too', () => {
    // Prepare
    const steps = [measured(0, 10, false), failed(measured(1, 20, false)), failed(measured(2, 20, true), 2)];

    // Act
    const act = () => planNextStep(ports, { input, execution, steps });

    // Assess
    expect(act).toThrow(CalibrationStepEvidenceError);
    expect(act).toThrow(/step 3 \(20 req\/s\) failed its evidence checks 2 times \(steps 2, 3\)/);
  });
});
