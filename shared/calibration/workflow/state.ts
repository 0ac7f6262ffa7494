import * as z from 'zod';
import { CalibrationInputInvalidError } from '../errors.js';
import { calibrationInputSchema, parseCalibrationInput, type CalibrationInput } from '../input.js';
import type { StepMeasurement } from '../types.js';

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
  name: z.string(),
  /** The in-cluster URL of the vLLM Service the k6 Jobs load. */
  serviceUrl: z.string(),
  /** `spec.replicas` before the calibration; null when the calibration created the Deployment. */
  replicasBefore: z.number().int().nullable(),
  testReplicas: z.number().int(),
  scaledObject: z.object({ namespace: z.string(), name: z.string() }).nullable(),
  /** When Deploy finished (epoch ms): the rollout's time bound starts here. */
  startedAtMs: z.number(),
  /** What was done, for the logs and the events: "adopted", "deployment configured", "scaledobject paused at 1". */
  actions: z.array(z.string()),
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
  rateRps: z.number().positive(),
  /** The hold the Job runs, whole seconds. */
  holdSeconds: z.number().positive(),
  /** The strategy's stricter stable-ending bar for this step (WatchLoadStep), if any. */
  stableAfterFraction: z.number().gt(0).max(1).optional(),
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
  /** An early ending: the decision and the end of the window the decision saw (its latest queue sample). */
  ending: z
    .object({
      kind: z.enum(['saturated-early', 'stable-early']),
      reason: z.string(),
      heldSeconds: z.number().min(0),
      plannedHoldSeconds: z.number().positive(),
    })
    .nullable(),
  windowEndMs: z.number().nullable(),
});
export type WatchState = z.infer<typeof watchStateSchema>;

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
