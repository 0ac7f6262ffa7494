import { decideKedaScale, KEDA_DEFAULTS } from '../kube/keda/activation.js';
import { computeHpaReplicas, type HpaHistory, type MetricReading } from '../kube/keda/hpaAlgorithm.js';
import { isTriggerActive } from '../kube/keda/prometheusTrigger.js';
import { hpaMinReplicas } from '../kube/keda/scaledObject.js';
import type { Candidate } from './candidate.js';
import { WhatIfInputInvalidError } from './errors.js';
import { performanceAt, type PerformanceModel } from './performanceModel.js';
import type { RateTrace } from './trace.js';

/**
 * Replays a request-rate trace through one candidate ScaledObject on a virtual clock, one second per step.
 *
 * Each second: the trace's rate is offered to the Ready replicas (a Service spreads it evenly); they complete up to
 * `capacityRps` each, the rest joins a backlog that drains when they have room. A second's p95 is the measured
 * curve's p95 at the per-replica rate served plus the time the backlog takes to drain (backlog / throughput): the
 * newest request waits behind all of it. The queue (`vllm:num_requests_waiting` summed over Pods) is the curve's
 * mean queue per replica times the replicas, plus the backlog.
 *
 * Every polling interval (the ScaledObject's `pollingInterval`, else KEDA's 30 s) the two triggers read what their
 * queries would: the queue now, and the p95 over the latency query's rate window (the per-second p95s weighted by
 * completions, standing for histogram_quantile over rate(...[W])). Those values go through the twin's own KEDA step
 * (`decideKedaScale`: activation, cooldown to zero) and HPA reconcile (`computeHpaReplicas`: AverageValue or Value
 * targets, tolerance, stabilization windows, policies, min/max), as `sim/kube/keda/controller.ts` feeds them. A new
 * Pod is Ready `modelLoadSeconds` after the HPA asks for it; a scale-down removes not-yet-Ready Pods first, as a
 * ReplicaSet does. The day starts settled: `minReplicaCount` Pods (KEDA's default 0), all Ready.
 *
 * Not modelled: the scrape interval and AMP's ingestion lag (the triggers read the current second), a Pod's slower
 * first requests after it becomes Ready, requests lost when a Pod is removed (its share stays in the backlog), and
 * trigger errors (a query always answers).
 */

export interface ReplayInput {
  trace: RateTrace;
  candidate: Candidate;
  model: PerformanceModel;
  /** Seconds from a Pod's creation to Ready (the profile's startup.modelLoadSeconds). */
  modelLoadSeconds: number;
  /** A second is within the SLO when its p95 is at most this many seconds. */
  sloSeconds: number;
  /** The HPA's tolerance; default 0.1 (kube-controller-manager's). */
  tolerance?: number;
  /** How many chart points at most (the series are bucketed to fit); default 1440 (a day at one per minute). */
  maxSeriesPoints?: number;
}

/** Per-bucket figures for the chart: the mean offered rate, the most Pods, the worst p95 and queue of the bucket. */
export interface ReplaySeries {
  bucketSeconds: number;
  offeredRps: number[];
  pods: number[];
  readyPods: number[];
  p95S: number[];
  queue: number[];
}

export interface ReplayResult {
  candidate: string;
  seconds: number;
  sloSeconds: number;
  /** Share of the seconds whose p95 was at most sloSeconds (0-1). */
  sloAttainment: number;
  /** Sum over seconds of the Pods that hold a GPU (Ready and starting), / 3600. */
  gpuHours: number;
  worstQueue: { waiting: number; atSecond: number };
  worstP95S: number;
  /** Polls after which the Deployment's replica count had changed. */
  scalingEvents: number;
  replicas: { min: number; max: number };
  /** Requests offered and completed (the difference is still in the backlog at the end). */
  offeredRequests: number;
  completedRequests: number;
  pollingIntervalSeconds: number;
  series: ReplaySeries;
}

/** Runs the replay; deterministic. */
export function replay(input: ReplayInput): ReplayResult {
  const { trace, candidate, model } = input;
  const so = candidate.scaledObject;
  checkInput(input);
  const pollS = so.pollingIntervalSeconds ?? KEDA_DEFAULTS.pollingIntervalSeconds;
  const capacity = model.capacityRps;
  const windowS = candidate.rateWindowS;
  const seconds = trace.rps.length;

  let spec = so.minReplicaCount ?? 0;
  let ready = spec;
  /** Seconds at which each starting Pod becomes Ready, oldest first. */
  let starting: number[] = [];
  let history: HpaHistory | undefined;
  let lastActiveTimeMs: number | undefined;
  let previousActive: ReturnType<typeof decideKedaScale>['active'] | undefined;

  let backlog = 0;
  let waiting = 0;
  // The latency trigger's window: completions and completions × p95 per second, in a ring.
  const windowDone = new Float64Array(windowS);
  const windowWeighted = new Float64Array(windowS);
  let sumDone = 0;
  let sumWeighted = 0;

  let withinSlo = 0;
  let gpuSeconds = 0;
  let scalingEvents = 0;
  let offered = 0;
  let completed = 0;
  let worstP95 = 0;
  const worstQueue = { waiting: 0, atSecond: 0 };
  let minPods = spec;
  let maxPods = spec;
  const bucket = Math.max(1, Math.ceil(seconds / (input.maxSeriesPoints ?? 1440)));
  const series: ReplaySeries = { bucketSeconds: bucket, offeredRps: [], pods: [], readyPods: [], p95S: [], queue: [] };
  let b = { offered: 0, pods: 0, ready: 0, p95: 0, queue: 0, n: 0 };

  for (let s = 0; s < seconds; s++) {
    const nowMs = s * 1000;
    while (starting.length > 0 && (starting[0] ?? Infinity) <= s) {
      starting.shift();
      ready += 1;
    }

    if (s % pollS === 0) {
      const latency = sumDone > 0 ? sumWeighted / sumDone : 0;
      const before = spec;
      const values = so.triggers.map((t) => (t.index === candidate.queueTrigger ? waiting : latency));
      const isActive = so.triggers.some((t, i) => isTriggerActive(t, values[i] ?? 0));
      const keda = decideKedaScale({
        nowMs,
        isActive,
        isError: false,
        currentReplicas: spec,
        ...(so.minReplicaCount !== undefined ? { minReplicaCount: so.minReplicaCount } : {}),
        ...(so.idleReplicaCount !== undefined ? { idleReplicaCount: so.idleReplicaCount } : {}),
        ...(so.cooldownPeriodSeconds !== undefined ? { cooldownPeriodSeconds: so.cooldownPeriodSeconds } : {}),
        ...(so.initialCooldownPeriodSeconds !== undefined
          ? { initialCooldownPeriodSeconds: so.initialCooldownPeriodSeconds }
          : {}),
        ...(lastActiveTimeMs !== undefined ? { lastActiveTimeMs } : {}),
        creationTimeMs: 0,
        ...(previousActive !== undefined ? { previousActive } : {}),
      });
      previousActive = keda.active;
      if (keda.touchLastActiveTime) lastActiveTimeMs = nowMs;
      if (keda.scaleTo !== undefined) spec = keda.scaleTo;
      const metrics: MetricReading[] = so.triggers.map((t, i) => ({
        name: t.metricName,
        targetType: t.metricType,
        target: t.threshold,
        value: values[i] ?? 0,
      }));
      const decision = computeHpaReplicas({
        nowMs,
        specReplicas: spec,
        statusReplicas: ready + starting.length,
        readyReplicas: ready,
        minReplicas: hpaMinReplicas(so),
        maxReplicas: so.maxReplicaCount,
        metrics,
        ...(so.behavior !== undefined ? { behavior: so.behavior } : {}),
        ...(input.tolerance !== undefined ? { tolerance: input.tolerance } : {}),
        ...(history !== undefined ? { history } : {}),
      });
      history = decision.history;
      if (decision.rescale) spec = decision.desiredReplicas;
      if (spec !== before) {
        scalingEvents += 1;
        const pods = ready + starting.length;
        if (spec > pods)
          starting = [...starting, ...Array.from({ length: spec - pods }, () => s + input.modelLoadSeconds)];
        else if (spec < pods) {
          // A ReplicaSet deletes Pods that are not Ready first (the newest of them first).
          let remove = pods - spec;
          const dropStarting = Math.min(remove, starting.length);
          starting = starting.slice(0, starting.length - dropStarting);
          remove -= dropStarting;
          ready -= remove;
        }
      }
      // A Pod whose model loads in 0 s is Ready at once.
      while (starting.length > 0 && (starting[0] ?? Infinity) <= s) {
        starting.shift();
        ready += 1;
      }
    }

    // The fluid step.
    const rate = trace.rps[s] ?? 0;
    offered += rate;
    let served = 0;
    let p95: number;
    if (ready === 0) {
      backlog += rate;
      waiting = backlog;
      p95 = backlog > 0 ? Number.POSITIVE_INFINITY : 0;
    } else {
      const throughput = ready * capacity;
      served = Math.min(backlog + rate, throughput);
      backlog = backlog + rate - served;
      const point = performanceAt(model, served / ready);
      p95 = point.p95S + backlog / throughput;
      waiting = ready * point.meanWaiting + backlog;
    }
    completed += served;
    const slot = s % windowS;
    // Nothing completes in a second without Ready Pods (p95 infinite): it adds no weight to the window.
    const weighted = served > 0 ? served * p95 : 0;
    sumDone += served - (windowDone[slot] ?? 0);
    sumWeighted += weighted - (windowWeighted[slot] ?? 0);
    windowDone[slot] = served;
    windowWeighted[slot] = weighted;
    if (p95 <= input.sloSeconds) withinSlo += 1;
    if (p95 > worstP95) worstP95 = p95;
    if (waiting > worstQueue.waiting) {
      worstQueue.waiting = waiting;
      worstQueue.atSecond = s;
    }
    const pods = ready + starting.length;
    gpuSeconds += pods;
    if (pods < minPods) minPods = pods;
    if (pods > maxPods) maxPods = pods;

    b = {
      offered: b.offered + rate,
      pods: Math.max(b.pods, pods),
      ready: Math.max(b.ready, ready),
      p95: Math.max(b.p95, p95),
      queue: Math.max(b.queue, waiting),
      n: b.n + 1,
    };
    if (b.n === bucket || s === seconds - 1) {
      series.offeredRps.push(b.offered / b.n);
      series.pods.push(b.pods);
      series.readyPods.push(b.ready);
      series.p95S.push(b.p95);
      series.queue.push(b.queue);
      b = { offered: 0, pods: 0, ready: 0, p95: 0, queue: 0, n: 0 };
    }
  }

  return {
    candidate: candidate.label,
    seconds,
    sloSeconds: input.sloSeconds,
    sloAttainment: seconds === 0 ? 1 : withinSlo / seconds,
    gpuHours: gpuSeconds / 3600,
    worstQueue,
    worstP95S: worstP95,
    scalingEvents,
    replicas: { min: minPods, max: maxPods },
    offeredRequests: offered,
    completedRequests: completed,
    pollingIntervalSeconds: pollS,
    series,
  };
}

function checkInput(input: ReplayInput): void {
  if (input.trace.rps.length === 0) throw new WhatIfInputInvalidError('trace', 'no seconds', 'a trace of at least 1 s');
  if (!(input.sloSeconds > 0 && Number.isFinite(input.sloSeconds)))
    throw new WhatIfInputInvalidError('sloSeconds', input.sloSeconds, 'a number of seconds > 0');
  if (!(input.modelLoadSeconds >= 0 && Number.isFinite(input.modelLoadSeconds)))
    throw new WhatIfInputInvalidError('modelLoadSeconds', input.modelLoadSeconds, 'a number of seconds >= 0');
  if (!(input.model.capacityRps > 0))
    throw new WhatIfInputInvalidError('model.capacityRps', input.model.capacityRps, 'a capacity > 0 requests/s');
}
