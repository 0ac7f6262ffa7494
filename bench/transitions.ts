import { BenchError } from './errors.js';

/**
 * Step Functions bills every state entered (retries included). The path of a calibration that succeeds, through the
 * states of statemachines/calibration.asl.json, with its poll loops as numbers: each loop is `check, choice` once
 * plus `wait, check, choice` per extra poll.
 */
export interface CalibrationPath {
  /** Extra rollout polls (CheckRollout → RolloutDone? → WaitRollout). */
  rolloutPolls: number;
  warmupPolls: number;
  readinessPolls: number;
  loadSteps: number;
  /** Looks at a running step per step (WatchLoadStep → StepEnded? → HoldStep). */
  watchPollsPerStep: number;
  /** Extra waits for a step's window to reach AMP, per step. */
  stepDataPollsPerStep: number;
}

/** The states of each stretch of the path, in order, as the ASL names them. */
const PATH = {
  start: ['Start', 'ValidateInput', 'Deploy'],
  rollout: ['CheckRollout', 'RolloutDone?', 'WaitRollout'],
  warmupStart: ['StartWarmup'],
  warmup: ['CheckWarmup', 'WarmupDone?', 'WaitWarmup'],
  readiness: ['ReadinessGate', 'Ready?', 'WaitReadiness'],
  stepStart: ['PlanNextStep', 'Done?', 'RestStep', 'StartLoadStep'],
  watch: ['WatchLoadStep', 'StepEnded?', 'HoldStep'],
  stepData: ['AwaitStepData', 'StepDataIn?', 'WaitStepData'],
  stepEnd: ['MeasureStep'],
  end: [
    'PlanNextStep',
    'Done?',
    'Analyze',
    'Apply?',
    'ApplyThresholds',
    'StoreReport',
    'Cleanup',
    'Notify',
    'Succeeded',
  ],
} as const;

/**
 * State transitions of one calibration along `path`. Throws BenchError when the definition lacks a state the path
 * names (the ASL changed: the count would be wrong).
 */
export function calibrationTransitions(definition: { States: Record<string, unknown> }, path: CalibrationPath): number {
  const missing = Object.values(PATH)
    .flat()
    .filter((state) => !(state in definition.States));
  if (missing.length > 0)
    throw new BenchError(`the calibration definition has no state ${missing.join(', ')}: update bench/transitions.ts`);
  // A poll loop: check + choice, then wait + check + choice for each extra poll.
  const loop = (polls: number) => 2 + 3 * polls;
  const perStep =
    PATH.stepStart.length + loop(path.watchPollsPerStep) + loop(path.stepDataPollsPerStep) + PATH.stepEnd.length;
  return (
    PATH.start.length +
    loop(path.rolloutPolls) +
    PATH.warmupStart.length +
    loop(path.warmupPolls) +
    loop(path.readinessPolls) +
    path.loadSteps * perStep +
    PATH.end.length
  );
}
