import * as z from 'zod';
import { toConfigIssues } from '../config/index.js';
import { CalibrationInputInvalidError, type InputIssue } from './errors.js';
import { EXECUTION_TIMEOUT_SECONDS } from './executionTimeout.js';
import { parseCalibrationInput, worstCaseDuration, type CalibrationInput } from './input.js';

/**
 * The many-target input: `{ targets: [<single-target input>, ...], maxConcurrency }`. A single-target input (a
 * `target`, no `targets`) is unchanged and runs as before; the state machine tells the two apart by `targets`.
 */

/** Bounds of a many-target input (docs/calibration.md, "Many targets"). */
export const BATCH_BOUNDS = {
  /**
   * Targets calibrated at once. Each running target holds at least one GPU at testReplicas and runs its own k6 load;
   * 10 is past what one team's GPU budget runs side by side, and a typo (`maxConcurrency: 100`) would start them all.
   */
  maxConcurrency: 10,
  defaultConcurrency: 2,
  /**
   * Targets in one list: each target's result (capacity, thresholds, change, report) travels in the execution's
   * state, which Step Functions caps at 256 KB; 20 keeps it well below. More: start several executions.
   */
  targets: 20,
} as const;

const batchFields = z.strictObject({
  targets: z
    .array(z.unknown(), { error: 'must be a list of single-target calibration inputs' })
    .min(1, { error: 'must list at least one target' })
    .max(BATCH_BOUNDS.targets, {
      error: `must list at most ${BATCH_BOUNDS.targets} targets (the execution's state holds every result); accepted: several executions`,
    }),
  maxConcurrency: z
    .number({ error: 'must be an integer (targets calibrated at once)' })
    .int({ error: 'must be an integer (targets calibrated at once)' })
    .min(1, { error: 'must be >= 1 (targets calibrated at once)' })
    .max(BATCH_BOUNDS.maxConcurrency, {
      error: `must be <= ${BATCH_BOUNDS.maxConcurrency} (targets calibrated at once; each holds a GPU and runs its own load)`,
    })
    .default(BATCH_BOUNDS.defaultConcurrency),
});

/** A validated many-target input: each entry parsed (defaults filled in) and as given (what its execution gets). */
export interface CalibrationBatchInput {
  targets: Array<{ parsed: CalibrationInput; given: Record<string, unknown> }>;
  maxConcurrency: number;
}

/** Whether an execution input is the many-target form (it has `targets`): the state machine's Choice reads the same. */
export function isBatchInput(input: unknown): boolean {
  return input !== null && typeof input === 'object' && !Array.isArray(input) && 'targets' in input;
}

/**
 * The identity of a target: the Deployment in its cluster. Two entries with the same one would fight over its replica
 * count and KEDA pause (the per-target lease refuses the second anyway, but only after the first has started).
 */
export function targetIdentity(target: CalibrationInput['target']): string {
  return `${target.region}/${target.cluster}/${target.namespace}/${target.deployment}`;
}

/**
 * Validates a many-target input: the list and maxConcurrency, every entry as ValidateInput would (its issues under
 * `targets[i].`), no Deployment twice (naming both entries), and the whole run within the execution timeout. Throws
 * CalibrationInputInvalidError naming every bad field.
 */
export function parseCalibrationBatchInput(input: unknown): CalibrationBatchInput {
  const outer = batchFields.safeParse(input, { error: unknownKeysError });
  if (!outer.success)
    throw new CalibrationInputInvalidError(
      outer.error.issues.flatMap((issue) =>
        issue.code === 'unrecognized_keys'
          ? issue.keys.map((key) => ({ path: key, message: issue.message }))
          : toConfigIssues('', [issue]),
      ),
    );
  const { targets: entries, maxConcurrency } = outer.data;
  const issues: InputIssue[] = [];
  const targets: CalibrationBatchInput['targets'] = [];
  entries.forEach((entry, i) => {
    const at = `targets[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      issues.push({ path: at, message: 'must be a single-target calibration input (an object with a target)' });
      return;
    }
    if ('batch' in entry) {
      issues.push({ path: `${at}.batch`, message: 'is set by the many-target execution itself; remove it' });
      return;
    }
    try {
      targets.push({ parsed: parseCalibrationInput(entry), given: entry as Record<string, unknown> });
    } catch (error) {
      if (!(error instanceof CalibrationInputInvalidError)) throw error;
      issues.push(...error.issues.map((issue) => ({ path: `${at}.${issue.path}`, message: issue.message })));
    }
  });
  if (issues.length > 0) throw new CalibrationInputInvalidError(issues);

  const first = new Map<string, number>();
  targets.forEach(({ parsed }, i) => {
    const identity = targetIdentity(parsed.target);
    const seen = first.get(identity);
    if (seen === undefined) first.set(identity, i);
    else
      issues.push({
        path: `targets[${i}].target`,
        message:
          `is the same Deployment as targets[${seen}].target (${parsed.target.namespace}/${parsed.target.deployment} ` +
          `in cluster ${parsed.target.cluster}, ${parsed.target.region}); accepted: each Deployment once per list ` +
          '(two runs on one target would fight over its replicas and its KEDA pause)',
      });
  });

  const bound = batchWorstCaseDuration(
    targets.map(({ parsed }) => worstCaseDuration(parsed).seconds),
    maxConcurrency,
  );
  if (bound.seconds > EXECUTION_TIMEOUT_SECONDS)
    issues.push({
      path: 'targets',
      message:
        `worst-case duration ${bound.seconds} s (${bound.formula}) exceeds the execution timeout ` +
        `${EXECUTION_TIMEOUT_SECONDS} s; accepted: a higher maxConcurrency, fewer targets per execution, or shorter plans`,
    });
  if (issues.length > 0) throw new CalibrationInputInvalidError(issues);
  return { targets, maxConcurrency };
}

/**
 * The longest a list of runs can take when at most `maxConcurrency` run at once and each starts as soon as a slot is
 * free: the longest run when all fit at once, else Graham's bound for list scheduling, sum / m + max × (1 − 1/m).
 */
export function batchWorstCaseDuration(
  durations: readonly number[],
  maxConcurrency: number,
): { seconds: number; formula: string } {
  const max = Math.max(0, ...durations);
  if (durations.length <= maxConcurrency)
    return { seconds: max, formula: `${durations.length} targets at once: the longest worst case ${max} s` };
  const m = Math.max(1, maxConcurrency);
  const sum = durations.reduce((a, b) => a + b, 0);
  return {
    seconds: Math.ceil(sum / m + max * (1 - 1 / m)),
    formula: `${durations.length} targets' worst cases summing to ${sum} s / ${m} at once + the longest ${max} s × (1 − 1/${m})`,
  };
}

function unknownKeysError(issue: z.core.$ZodRawIssue): string | undefined {
  return issue.code === 'unrecognized_keys' ? 'unknown key; accepted: targets, maxConcurrency' : undefined;
}
