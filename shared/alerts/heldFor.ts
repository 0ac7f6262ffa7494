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

/**
 * `held` (a `heldForQuery`) kept firing for `keepSeconds` after it last returned a series, as Prometheus's
 * `keep_firing_for` keeps a firing alert: the value now while it holds, else its last value within the past
 * `keepSeconds` plus one step (sampled every `resolutionSeconds`), else nothing. Asked of the history at one instant
 * like `heldForQuery`, it needs no state either. `keepSeconds = 0` is `held` itself.
 *
 * Why the extra step: the subquery's steps are aligned to multiples of its step, so the last step that saw `held` can
 * be up to one step before the moment it last held; a range of exactly `keepSeconds` would then keep it firing as
 * little as `keepSeconds` less one step (found on the twin: a 3 s scrape gap resolved an alert kept for 12 s). With
 * the step added it keeps firing at least `keepSeconds`, at most one step more.
 * Why `held or last_over_time(...)` and not the subquery alone: for the same alignment, the subquery on its own
 * would see a condition that began to hold up to one step late.
 */
export function keptFiringQuery(held: string, keepSeconds: number, resolutionSeconds: number): string {
  if (held.trim() === '') throw new PromqlInvalidArgumentError('held', held, 'a PromQL expression');
  assertWholeSeconds(keepSeconds, 'keepSeconds', 0);
  if (keepSeconds === 0) return held;
  assertWholeSeconds(resolutionSeconds, 'resolutionSeconds', 1);
  return `(${held}) or last_over_time((${held})[${keepSeconds + resolutionSeconds}s:${resolutionSeconds}s])`;
}

/**
 * The Lambda evaluator's whole condition for a rule: `value > threshold` held for `forSeconds` (`heldForQuery`), kept
 * firing for `keepSeconds` (`keptFiringQuery`). The one place both steps are chosen, so the evaluator and the promtool
 * checks of it (export/promtoolTests.ts) ask the same question.
 *
 * Why the keep's step is at most the `for`'s: the keep looks back for any step where `held` returned the series. `held`
 * needs the series present now and `for` ago, so while scrapes fail now and then (a loaded target, a flaky network)
 * it is present only at some instants; sampled every 15 s (a 90 s keep alone), every sample could miss them and the
 * alert resolve while its condition still holds (seen on the loaded twin: a 20 s keep sampled every 5 s resolved and
 * fired again twice during one KV-cache excursion). Sampled as finely as `held` samples its own window, the keep
 * sees what `held` saw. It costs one `held` evaluation per step: `keepSeconds / step + 1` of them.
 */
export function alertConditionQuery(value: string, threshold: number, forSeconds: number, keepSeconds: number): string {
  const { forStep, keepStep } = conditionSteps(forSeconds, keepSeconds);
  return keptFiringQuery(heldForQuery(value, threshold, forSeconds, forStep), keepSeconds, keepStep);
}

/**
 * How far before the evaluation instant `alertConditionQuery` reads its value (whose own rate window comes on top):
 * the keep-firing look-back and its step, then the `for` window and the step its `offset` reads before it.
 */
export function alertConditionLookbackSeconds(forSeconds: number, keepSeconds: number): number {
  const { forStep, keepStep } = conditionSteps(forSeconds, keepSeconds);
  return (keepSeconds > 0 ? keepSeconds + keepStep : 0) + (forSeconds > 0 ? forSeconds + forStep : 0);
}

function conditionSteps(forSeconds: number, keepSeconds: number): { forStep: number; keepStep: number } {
  const forStep = resolutionFor(forSeconds);
  const keepStep = forSeconds > 0 ? Math.min(resolutionFor(keepSeconds), forStep) : resolutionFor(keepSeconds);
  return { forStep, keepStep };
}

/** A number as a PromQL literal: JavaScript's shortest form (`0.95`, `5`, `1e-7`) is valid PromQL. */
function formatNumber(n: number): string {
  return String(n);
}

function assertWholeSeconds(value: number, field: string, min: number): void {
  if (!Number.isInteger(value) || value < min)
    throw new PromqlInvalidArgumentError(field, value, `a whole number of seconds >= ${min}`);
}
