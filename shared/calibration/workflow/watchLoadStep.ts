import * as z from 'zod';
import { containerStartMs, jobPhase, jobPod, KINDS, PROPAGATION_POLICIES } from '../../kube/index.js';
import {
  domainOfMetric,
  guardSinglePoints,
  guardSingleValue,
  VALUE_DOMAIN,
  type MetricsSource,
} from '../../metrics/index.js';
import { decideStepEnding, DEFAULT_MIN_SECONDS_FRACTION, type QueueSample } from '../earlyStop.js';
import type { KvCacheSample } from '../kvCache.js';
import { CalibrationJobFailedError } from '../errors.js';
import { fmt } from '../format.js';
import type { CalibrationInput } from '../input.js';
import { queueStepSeconds } from '../rules.js';
import { estimateScrapeSeconds } from '../scrapeInterval.js';
import { calibrationTarget, stepQueries } from '../stepQueries.js';
import { jobFailedError } from './k6Jobs.js';
import { lookAtK6, type K6Look } from './k6Live.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, loadStateSchema, watchStateSchema, type WatchState } from './state.js';
import type { CalibrationStep } from './step.js';

/**
 * How far into the load AMP's window of a step ended early must hold a scrape: at least k6's least load before an
 * ending (minSeconds), and this many request lifetimes (k6's fastest request so far stands for one, queue wait
 * included): by then the batch holds only requests of the step. Its completions are read at that sample
 * (shared/calibration/counterWindow.ts) and corrected for the requests in flight, C ≈ completions / (span − S), with S
 * at most half the span (capacityEstimate.ts); the batch and the queue estimate the capacity too, and the median of
 * the three stands. Two lifetimes, tried first, held a prefill-heavy step at 10 req/s (its fastest request took 16 s
 * under overload) past its 60 s hold: it could not end early with 30 s scrapes.
 */
const MIN_LIFETIMES_TO_LAST_SCRAPE = 1;

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'metricsSource'>;
const event = z.object({ ...baseEventShape, load: loadStateSchema, previous: watchStateSchema.nullable() });

/**
 * WatchLoadStep: one look at the running load step (→ `$.watch`). Once its hold is over → `held` (CheckLoadJob then
 * waits for k6's summary). Before, it reads k6's live metrics through the Pod proxy (./k6Live.ts: saturation without
 * AMP's lag, shared/calibration/k6Signal.ts), then asks AMP for the step's queue samples so far and
 * shared/calibration/earlyStop.ts whether the outcome is already evident; if either says so it stops the k6 Job
 * (deleted, propagation Foreground, so its Pod and the load go with it) and returns `ended` with the ending and its
 * evidence, else `continue` with the seconds until the next look.
 * A Job that failed throws CalibrationJobFailedError (as CheckJob would); one that is gone, too.
 */
export async function watchLoadStep(
  ports: Ports,
  { input, execution, load, previous }: z.output<typeof event>,
): Promise<WatchState> {
  const { job } = load;
  const settings = {
    ...input.plan.earlyStop,
    stableAfterFraction: Math.max(input.plan.earlyStop.stableAfterFraction, load.stableAfterFraction ?? 0),
  };
  const cluster = await ports.cluster(input.target);
  const where = `load Job ${job.namespace}/${job.name}`;
  const live = await cluster.get({ ...KINDS.job, namespace: job.namespace, name: job.name });
  if (live === undefined)
    throw new CalibrationJobFailedError(`${where} is gone: it was deleted before its hold was over`);
  const phase = jobPhase(live);
  if (phase.phase === 'failed') throw await jobFailedError(cluster, job, phase.reason);

  const pod = await jobPod(cluster, job.namespace, job.name);
  const startedMs = pod === undefined ? undefined : containerStartMs(pod);
  const loadStartMs = startedMs === undefined ? null : Math.max(job.createdAtMs, startedMs);
  const nowMs = ports.clock.now();
  const hold = load.holdSeconds;
  /** This look's reading of k6's live metrics, once taken: carried in the state, its note added to the reason. */
  let k6: K6Look | undefined;
  const look = (
    fields: Pick<WatchState, 'status' | 'reason' | 'waitSeconds'> & Partial<Omit<WatchState, 'job'>>,
  ): WatchState => {
    const state: WatchState = { job: job.name, loadStartMs, ending: null, windowEndMs: null, ...fields };
    // An early ending not decided from k6's live metrics was decided from AMP's queue.
    if (state.ending !== null && state.ending.evidence === undefined)
      state.ending = { ...state.ending, evidence: 'amp' };
    if (k6 !== undefined) {
      state.k6Readings = k6.readings;
      if (state.ending?.evidence !== 'k6') state.reason = `${state.reason}; ${k6.note}`;
      // An ended Job prints no summary: what k6 dropped (every VU busy) comes from its last live reading.
      const dropped = k6.readings.at(-1)?.droppedIterations;
      if (state.ending !== null && dropped !== undefined)
        state.ending = { ...state.ending, droppedIterations: dropped };
    }
    ports.logger.info('load step watched', { execution: execution.name, ...state });
    return state;
  };
  const waitUntil = (seconds: number) => Math.max(1, Math.ceil(seconds));

  const heldReason = () => {
    const last = previous?.job === job.name && previous.status === 'continue' ? `; last look: ${previous.reason}` : '';
    return settings.enabled
      ? `held the planned ${fmt(hold, 0)} s: neither saturation nor stability was evident early${last}`
      : `held the planned ${fmt(hold, 0)} s (plan.earlyStop.enabled false)`;
  };
  if (phase.phase === 'succeeded' || (loadStartMs !== null && nowMs >= loadStartMs + hold * 1000))
    return look({ status: 'held', reason: heldReason(), waitSeconds: 1 });
  if (loadStartMs === null)
    return look({
      status: 'continue',
      reason: 'the k6 container has not started yet',
      waitSeconds: waitUntil(Math.min(settings.watchSeconds, hold)),
    });

  const elapsed = (nowMs - loadStartMs) / 1000;
  const remaining = hold - elapsed;
  if (!settings.enabled) return look({ status: 'continue', reason: heldReason(), waitSeconds: waitUntil(remaining) });

  // k6's live metrics first: they have no ingestion lag, so a saturated step ends now, even before AMP holds a sample
  // of it. AMP's series stay the judge of the step's verdict (MeasureStep), over the window up to the Job's stop.
  if (pod !== undefined) {
    k6 = await lookAtK6({
      cluster,
      clock: ports.clock,
      namespace: job.namespace,
      job: job.name,
      pod: pod.metadata.name,
      previous,
      loadStartMs,
      offeredRps: load.rateRps,
      plannedHoldSeconds: hold,
      settings,
    });
    // AMP judges the step over [load start, stop]: its window must hold a scrape far enough in to measure from it
    // (MIN_LIFETIMES_TO_LAST_SCRAPE), so k6's ending waits for it.
    const scrapeSeconds =
      k6.decision.action === 'end'
        ? await estimateScrapeSeconds(ports.metricsSource(input.target), calibrationTarget(input), nowMs)
        : 0;
    const lifetime = (k6.readings.at(-1)?.minDurationMs ?? 0) / 1000;
    const measuredFrom = Math.max(
      settings.minSeconds ?? DEFAULT_MIN_SECONDS_FRACTION * hold,
      MIN_LIFETIMES_TO_LAST_SCRAPE * lifetime,
    );
    const measurableAfter = scrapeSeconds + measuredFrom + 1;
    if (k6.decision.action === 'end' && elapsed < measurableAfter) {
      k6 = {
        ...k6,
        decision: { action: 'continue', reason: k6.decision.reason },
        note:
          `${k6.decision.reason}; held on until ${fmt(measurableAfter, 0)} s of load, so that AMP's window holds a ` +
          `scrape (about every ${fmt(scrapeSeconds, 0)} s) ${fmt(measuredFrom, 0)} s in or later to measure from`,
      };
      return look({
        status: 'continue',
        reason: `after ${fmt(elapsed, 0)} s`,
        waitSeconds: waitUntil(Math.min(remaining, measurableAfter - elapsed)),
      });
    }
    if (k6.decision.action === 'end') {
      await cluster.delete(
        { ...KINDS.job, namespace: job.namespace, name: job.name },
        { propagationPolicy: PROPAGATION_POLICIES.foreground },
      );
      const stoppedMs = ports.clock.now();
      return look({
        status: 'ended',
        reason: k6.decision.reason,
        waitSeconds: 1,
        ending: {
          kind: 'saturated-early',
          reason: k6.decision.reason,
          evidence: 'k6',
          heldSeconds: Math.min(hold, (stoppedMs - loadStartMs) / 1000),
          plannedHoldSeconds: hold,
        },
        windowEndMs: stoppedMs,
      });
    }
  }
  // Nothing can be decided before the earlier of the two endings' least times: no AMP query until then.
  const earliest = Math.min(
    settings.minSeconds ?? DEFAULT_MIN_SECONDS_FRACTION * hold,
    settings.stableAfterFraction * hold,
  );
  if (elapsed < earliest)
    return look({
      status: 'continue',
      reason: `after ${fmt(elapsed, 0)} s: no ending is possible before ${fmt(earliest, 0)} s of load`,
      waitSeconds: waitUntil(Math.min(remaining, Math.max(earliest - elapsed, settings.watchSeconds))),
    });

  const source = ports.metricsSource(input.target);
  const [{ samples, kvCache }, lifetime] = await Promise.all([
    ampSamplesSoFar(source, input, hold, loadStartMs, nowMs),
    lifetimeSoFar(source, input, elapsed, nowMs),
  ]);
  const latestMs = samples.at(-1)?.tMs ?? loadStartMs;
  const decision = decideStepEnding(samples, {
    offeredRps: load.rateRps,
    elapsedSeconds: Math.max(0, (latestMs - loadStartMs) / 1000),
    plannedHoldSeconds: hold,
    pods: input.testReplicas,
    requestLifetimeSeconds: lifetime,
    settings,
    kvCache,
  });
  if (decision.action === 'continue')
    return look({
      status: 'continue',
      reason: decision.reason,
      waitSeconds: waitUntil(Math.min(remaining, settings.watchSeconds)),
    });

  await cluster.delete(
    { ...KINDS.job, namespace: job.namespace, name: job.name },
    { propagationPolicy: PROPAGATION_POLICIES.foreground },
  );
  const endedMs = ports.clock.now();
  return look({
    status: 'ended',
    reason: decision.reason,
    waitSeconds: 1,
    ending: {
      kind: decision.kind === 'saturated' ? 'saturated-early' : 'stable-early',
      reason: decision.reason,
      heldSeconds: Math.min(hold, (endedMs - loadStartMs) / 1000),
      plannedHoldSeconds: hold,
    },
    // The measurement covers what the decision saw: AMP had those samples, the seconds after may not be in it yet.
    windowEndMs: latestMs,
  });
}

export const watchLoadStepStep = {
  name: 'watchLoadStep',
  label: 'WatchLoadStep',
  placeholder: 'WatchLoadStepFunctionArn',
  event,
  run: watchLoadStep,
} satisfies CalibrationStep<typeof event, WatchState, Ports>;

/**
 * The mean decode time of the requests finished since the load began (the step's meanLifetime, seconds, at least 0),
 * or null if none. The answer is one series, a difference of two means that may fall below 0 (VALUE_DOMAIN.difference);
 * several series or ±Inf is a named error (the shared AMP answer guard, as MeasureStep reads the same query).
 */
export async function lifetimeSoFar(
  source: MetricsSource,
  input: CalibrationInput,
  elapsedSeconds: number,
  nowMs: number,
): Promise<number | null> {
  const query = stepQueries(calibrationTarget(input), Math.max(1, elapsedSeconds)).meanLifetime;
  const value = guardSingleValue(await source.instant(query, { timeMs: nowMs }), VALUE_DOMAIN.difference, query);
  return value === undefined ? null : Math.max(0, value);
}

/**
 * AMP's samples from the load's start to now: `sum(vllm:num_requests_waiting)` and the busiest Pod's KV-cache usage,
 * at the step's query step but never closer than the scrape interval (estimated as the readiness gate does): repeats
 * of one scrape are not independent samples. Also the preemptions since the load began (an instant `increase`).
 * Each answer is one series and passes the shared AMP answer guard (the queue and preemptions >= 0, the KV cache a
 * 0-1 fraction): several series, a value outside its domain or ±Inf is a named error, never a sample.
 */
export async function ampSamplesSoFar(
  source: MetricsSource,
  input: CalibrationInput,
  holdSeconds: number,
  startMs: number,
  nowMs: number,
): Promise<{ samples: QueueSample[]; kvCache: { samples: KvCacheSample[]; preemptions: number } }> {
  const target = calibrationTarget(input);
  const scrapeSeconds = await estimateScrapeSeconds(source, target, nowMs);
  const queries = stepQueries(target, holdSeconds);
  const span = {
    startMs,
    endMs: nowMs,
    stepSeconds: Math.max(queueStepSeconds(holdSeconds), Math.round(scrapeSeconds)),
  };
  const soFar = stepQueries(target, Math.max(1, (nowMs - startMs) / 1000));
  const [queue, kv, preempted] = await Promise.all([
    source.range(queries.queue, span),
    source.range(queries.kvCacheLast, span),
    source.instant(soFar.preemptions, { timeMs: nowMs }),
  ]);
  const preemptions = guardSingleValue(preempted, VALUE_DOMAIN.nonNegative, soFar.preemptions);
  return {
    samples: guardSinglePoints(queue, VALUE_DOMAIN.nonNegative, queries.queue).map((p) => ({
      tMs: p.timestampMs,
      queue: p.value,
    })),
    kvCache: {
      samples: guardSinglePoints(kv, domainOfMetric({ renamed: 'kvCacheUsage' }), queries.kvCacheLast).map((p) => ({
        tMs: p.timestampMs,
        usage: p.value,
      })),
      // No series: the counter did not exist, nothing was preempted. NaN stays suspect (earlyStop.ts then refuses a
      // stable ending on it); a negative count never gets here (the guard refused it).
      preemptions: preemptions ?? (preempted.length === 0 ? 0 : Number.NaN),
    },
  };
}
