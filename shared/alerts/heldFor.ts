import { PromqlInvalidArgumentError } from '../metrics/index.js';

/**
 * A rule's `for` evaluated in PromQL, so that a scheduled evaluator (one Lambda a minute) needs no pending state.
 *
 * Prometheus fires an alert once its expression has returned the series at every rule evaluation for `for`
 * (rules/alerting.go: pending → firing when `ts - activeAt >= holdDuration`; one evaluation without it resets it).
 * Without that state, the same question is asked of the history at one instant t:
 * 1. the condition holds now: `(V) > T`;
 * 2. it held at the window's start: `last_over_time(((V) > T)[<res>s:<res>s] offset <for>s)` (the step at or
 *    just before t - for); a series born less than `for` ago has no sample then, so it cannot fire early
 *    (Prometheus's `activeAt` is the first evaluation that saw it);
 * 3. it never failed in between: a subquery over `[<for>s:<res>s]` counts the steps where it held, and that must
 *    equal the steps where the series existed at all. A NaN step exists but does not hold, so it breaks the run
 *    like a failing evaluation would (the latency rule drops NaN first: a step without traffic is no series).
 */

/** Largest subquery step: a typical scrape interval, so a dip lasting one scrape is still seen. */
const MAX_RESOLUTION_SECONDS = 15;
/** At least this many subquery steps per `for` window. */
const STEPS_PER_WINDOW = 4;

/**
 * The subquery step for a `for` of `forSeconds`: `max(1, min(15, floor(for / 4)))` seconds.
 *
 * Why: the step decides how short a dip can break the run. Four steps per window at least keep short `for`s
 * (30 s → 7 s) meaningful; more than one step per 15 s adds cost (AMP bills every sample a query touches) without
 * seeing more, since a sample only changes once per scrape (15-30 s in kube-prometheus-stack and AMP setups);
 * 1 s is the floor because `for` and the subquery range are whole seconds.
 */
export function resolutionFor(forSeconds: number): number {
  assertWholeSeconds(forSeconds, 'forSeconds', 0);
  return Math.max(1, Math.min(MAX_RESOLUTION_SECONDS, Math.floor(forSeconds / STEPS_PER_WINDOW)));
}

/**
 * The PromQL that returns, per series of `value`, the value now when `value > threshold` has held for `forSeconds`
 * (sampled every `resolutionSeconds`), and nothing otherwise. `forSeconds = 0` is just `(value) > threshold`.
 */
export function heldForQuery(value: string, threshold: number, forSeconds: number, resolutionSeconds: number): string {
  if (value.trim() === '') throw new PromqlInvalidArgumentError('value', value, 'a PromQL expression');
  if (!Number.isFinite(threshold)) throw new PromqlInvalidArgumentError('threshold', threshold, 'a finite number');
  assertWholeSeconds(forSeconds, 'forSeconds', 0);
  const condition = `(${value}) > ${formatNumber(threshold)}`;
  if (forSeconds === 0) return condition;
  assertWholeSeconds(resolutionSeconds, 'resolutionSeconds', 1);
  const window = `[${forSeconds}s:${resolutionSeconds}s]`;
  // `offset` applies only to a selector or a subquery, not to `(expr)`: a one-step subquery carries it.
  const atStart = `last_over_time((${condition})[${resolutionSeconds}s:${resolutionSeconds}s] offset ${forSeconds}s)`;
  return (
    `(${condition}) and (${atStart}) and ` +
    `(count_over_time((${condition})${window}) == count_over_time((${value})${window}))`
  );
}

/** A number as a PromQL literal: JavaScript's shortest form (`0.95`, `5`, `1e-7`) is valid PromQL. */
function formatNumber(n: number): string {
  return String(n);
}

function assertWholeSeconds(value: number, field: string, min: number): void {
  if (!Number.isInteger(value) || value < min)
    throw new PromqlInvalidArgumentError(field, value, `a whole number of seconds >= ${min}`);
}
