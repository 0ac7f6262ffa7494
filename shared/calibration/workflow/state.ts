import * as z from 'zod';
import { CalibrationInputInvalidError } from '../errors.js';
import { calibrationInputSchema, parseCalibrationInput, type CalibrationInput } from '../input.js';
import { K6_SIGNAL_RULES, type K6Reading } from '../k6Signal.js';
import { STEP_ENDING_EVIDENCE, type StepMeasurement } from '../types.js';

/**
 * The slices of the state machine's state that the steps receive (their states' Parameters), and the slices they
 * return. The layout of the whole state is set once by the `Start` state of statemachines/calibration.asl.json.
 */

/** `$.execution`: from the Context Object. */
export const executionSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  startTime: z.string().min(1),
});
export type ExecutionInfo = z.infer<typeof executionSchema>;

/** `$.input` after ValidateInput: the parsed input (re-parsed by each step, which is idempotent). */
const validatedInput = z.unknown().transform((value, ctx): CalibrationInput => {
  try {
    return parseCalibrationInput(value);
  } catch (error) {
    if (!(error instanceof CalibrationInputInvalidError)) throw error;
    for (const issue of error.issues) ctx.addIssue({ code: 'custom', message: `${issue.path}: ${issue.message}` });
    return z.NEVER;
  }
});

/** A Job the calibration created, as the state carries it. */
export const jobRefSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  component: z.enum(['warmup', 'load']),
  /** When the Job was created (epoch ms): the start of its time bound and of its load. */
  createdAtMs: z.number(),
  /** CheckJob fails with CalibrationJobTimeoutError once the Job has run this long. */
  boundSeconds: z.number().positive(),
});
export type JobRef = z.infer<typeof jobRefSchema>;

/** `$.deployment`: what Deploy did. */
export const deploymentStateSchema = z.object({
  namespace: z.string(),
  /** The Deployment the load goes to: the target's, or its shadow copy's (deploy.mode shadow). */
  name: z.string(),
  /** deploy.mode shadow: the production Deployment `name` copies (not touched). Absent in the other modes. */
  shadowOf: z.string().optional(),
  /** The in-cluster URL of the vLLM Service the k6 Jobs load. */
  serviceUrl: z.string(),
  /** `spec.replicas` before the calibration; null when the calibration created the Deployment. */
  replicasBefore: z.number().int().nullable(),
  testReplicas: z.number().int(),
  /**
   * The target's ScaledObject, which the thresholds are written to; null when it has none. adopt and apply pause it
   * while the calibration holds the target (the cleanup resumes it); shadow leaves it running.
   */
  scaledObject: z.object({ namespace: z.string(), name: z.string() }).nullable(),
  /** When Deploy finished (epoch ms): the rollout's time bound starts here. */
  startedAtMs: z.number(),
  /** What was done, for the logs and the events: "adopted", "deployment configured", "scaledobject paused at 1". */
  actions: z.array(z.string()),
  /** What the target served before anything changed (shared/calibration/background.ts): k6 adds to it. */
  background: z.object({ rateRps: z.number().min(0), reason: z.string() }),
  /**
   * The vLLM container's `--max-num-seqs` (per replica; shared/calibration/engineArgs.ts); null when not set there.
   * Absent in states written before it was read.
   */
  maxNumSeqs: z.number().int().positive().nullable().optional(),
});
export type DeploymentState = z.infer<typeof deploymentStateSchema>;

/** `$.warmup`: what StartWarmup created. */
export const warmupStateSchema = z.object({
  configMap: z.object({ namespace: z.string(), name: z.string() }),
  /** null when `warmup.requests` is 0. */
  job: jobRefSchema.nullable(),
});
export type WarmupState = z.infer<typeof warmupStateSchema>;

/** `$.plan` when there is a next step: its rate, hold and rest. */
export const plannedStepSchema = z.object({
  // StartLoadStep gets only this branch: the state machine sends a done plan to Analyze.
  done: z.literal(false, { error: 'is true: no step to start' }),
  reason: z.string(),
  index: z.number().int().min(0),
  rateRps: z.number().positive(),
  holdSeconds: z.number().positive(),
  restSeconds: z.number().min(0),
  /** Whole seconds for the Wait states (SecondsPath takes integers). */
  holdWaitSeconds: z.number().int().min(0),
  restWaitSeconds: z.number().int().min(0),
  stableAfterFraction: z.number().gt(0).max(1).optional(),
});

/** `$.plan`: the strategy's decision for the next step. */
export const planStateSchema = z.discriminatedUnion('done', [
  z.object({ done: z.literal(true), reason: z.string(), index: z.number().int() }),
  plannedStepSchema,
]);
export type PlanState = z.infer<typeof planStateSchema>;

/** `$.load`: the current step's Job. */
export const loadStateSchema = z.object({
  job: jobRefSchema,
  index: z.number().int().min(0),
  /** The rate offered in all: k6's plus the background the target already served. */
  rateRps: z.number().positive(),
  /** k6's share of rateRps (rateRps when the target serves nobody else). */
  k6RateRps: z.number().positive(),
  backgroundRps: z.number().min(0),
  /** The hold the Job runs, whole seconds. */
  holdSeconds: z.number().positive(),
  /** The strategy's stricter stable-ending bar for this step (WatchLoadStep), if any. */
  stableAfterFraction: z.number().gt(0).max(1).optional(),
  /** The Deployment's `--max-num-seqs` (Deploy read it), recorded with the step's measurement. */
  maxNumSeqs: z.number().int().positive().nullable().optional(),
  /**
   * The measured Deployment's Ready Pods when the step started (shared/calibration/evidence.ts): MeasureStep checks the
   * same Pods served the whole window. Absent in states written before it was recorded (the Pod check is skipped).
   */
  servedBy: z
    .object({
      deployment: z.string(),
      pods: z.array(
        z.object({
          name: z.string(),
          uid: z.string(),
          restartCount: z.number().int().min(0),
          containerStartMs: z.number().nullable(),
        }),
      ),
    })
    .optional(),
});
export type LoadState = z.infer<typeof loadStateSchema>;

/** `$.watch`: WatchLoadStep's last look at the running step (null before the first step). */
export const watchStateSchema = z.object({
  /** `continue`: look again after waitSeconds; `ended`: stopped early (Job deleted); `held`: the hold is over. */
  status: z.enum(['continue', 'ended', 'held']),
  /** The Job looked at: a look at an earlier step's Job says nothing about this one. */
  job: z.string(),
  reason: z.string(),
  /** Whole seconds until the next look (SecondsPath takes integers). */
  waitSeconds: z.number().int().min(1),
  /** When the load started (epoch ms): the later of the Job's creation and the k6 container's start; null before. */
  loadStartMs: z.number().nullable(),
  /**
   * An early ending, and the end of the window MeasureStep measures: the latest queue sample the decision saw (AMP),
   * or the moment the Job was stopped (k6: its readings are live).
   */
  ending: z
    .object({
      kind: z.enum(['saturated-early', 'stable-early']),
      reason: z.string(),
      heldSeconds: z.number().min(0),
      plannedHoldSeconds: z.number().positive(),
      evidence: z.enum(STEP_ENDING_EVIDENCE).optional(),
      droppedIterations: z.number().min(0).optional(),
    })
    .nullable(),
  windowEndMs: z.number().nullable(),
  /** This step's readings of k6's live metrics so far, the latest K6_SIGNAL_RULES.keptReadings (k6Signal.ts). */
  k6Readings: z
    .array(
      z.object({
        tMs: z.number(),
        vus: z.number().min(0),
        iterations: z.number().min(0),
        droppedIterations: z.number().min(0),
        httpReqs: z.number().min(0),
        minDurationMs: z.number().min(0).optional(),
      }) satisfies z.ZodType<K6Reading>,
    )
    .max(K6_SIGNAL_RULES.keptReadings)
    .optional(),
});
export type WatchState = z.infer<typeof watchStateSchema>;

/** `$.stepData`: AwaitStepData's last look at whether AMP holds the step's window (null before the first). */
export const stepDataStateSchema = z.object({
  /** The load Job whose window was looked for: a look at an earlier step's window says nothing about this one. */
  job: z.string(),
  /** `in`: AMP holds samples past the window's end (measure it); `waiting`: look again after waitSeconds. */
  status: z.enum(['in', 'waiting']),
  reason: z.string(),
  windowEndMs: z.number(),
  latestSampleMs: z.number().nullable(),
  /** Seconds from the window's end to this look. */
  waitedSeconds: z.number().min(0),
  looks: z.number().int().min(1),
  firstLookMs: z.number(),
  /** Whole seconds until the next look (SecondsPath takes integers). */
  waitSeconds: z.number().int().min(1),
});
export type StepDataState = z.infer<typeof stepDataStateSchema>;

/** A poll loop's previous answer (`$.rollout`, `$.warmupCheck`, `$.readiness`, `$.loadCheck`); null before the first. */
export const previousCheckSchema = z
  .looseObject({ attempts: z.number().int().min(0), startedAtMs: z.number().optional(), job: z.string().optional() })
  .nullable();
export type PreviousCheck = z.infer<typeof previousCheckSchema>;

/** `$.steps`: the measurements so far (checked lightly: they were produced by MeasureStep). */
export const stepsSchema = z
  .array(
    z.looseObject({
      index: z.number().int().min(0),
      rateRps: z.number(),
      holdSeconds: z.number(),
      verdict: z.object({ saturated: z.boolean(), reasons: z.array(z.string()) }),
    }),
  )
  .transform((steps) => steps as unknown as StepMeasurement[]);

/** The two fields every step gets. */
export const baseEventShape = { input: validatedInput, execution: executionSchema };

/** The raw input (ValidateInput and the cleanup, which may run after ValidateInput refused it). */
export const rawInputSchema = calibrationInputSchema;
