/**
 * A step is evidence, or it is repeated: before a step is judged, MeasureStep checks that its data can be trusted
 * (EVIDENCE_RULES). Three checks, each giving reasons (empty: it held):
 * 1. coverage: AMP's samples of each measured Pod cover the window, no gap longer than two scrape intervals and a
 *    sample at or past its end (a Prometheus paused across the end read "completed 12.6/s" for 20 req/s);
 * 2. Pods: the Pods that served the window are the Ready Pods of its start, none restarted, none new (a replacement
 *    is cold: not warmed up), and AMP shows exactly them;
 * 3. completions: AMP's completions agree with what k6 got back, k6's requests did not fail fast in numbers (a
 *    Pod deleted 3 s into a step failed 100 of 240 requests: a broken step, not saturation), and k6 kept up: with no
 *    queue at the replica, k6's requests took not much longer than vLLM served them (a k6 short of CPU measures itself).
 * A step that fails is repeated once at the same rate (workflow/planNextStep.ts), failing again ends the run
 * (CalibrationStepEvidenceError); the analysis uses only steps whose evidence held.
 */
import { containerStartMs, deploymentPods, KINDS, type ClusterClient, type KubeObject } from '../kube/index.js';
import {
  guardSamples,
  guardSeries,
  MetricsError,
  VALUE_DOMAIN,
  VLLM,
  vllmSelector,
  type MetricsSource,
  type RangeSeries,
} from '../metrics/index.js';
import { CalibrationDependencyUnavailableError } from './errors.js';
import { fmt, pct } from './format.js';
import type { CalibrationInput } from './input.js';
import { EVIDENCE_RULES, SATURATION_RULES } from './rules.js';
import { scrapeSecondsFromSampleTimes } from './scrapeInterval.js';
import { calibrationTarget } from './stepQueries.js';
import type { StepEvidence, StepMeasurement } from './types.js';

/** A Pod as the evidence checks compare it: identity, restarts and its container's start. */
export interface PodRecord {
  name: string;
  uid: string;
  restartCount: number;
  containerStartMs: number | null;
}

/** The Pods serving a step at its start (recorded by StartLoadStep in `$.load.servedBy`). */
export interface ServedBy {
  deployment: string;
  pods: PodRecord[];
}

/** A Pod's identity, its containers' restarts (summed) and its first container's start. */
export function podRecord(pod: KubeObject): PodRecord {
  const statuses =
    (pod.status as { containerStatuses?: Array<{ restartCount?: number }> } | undefined)?.containerStatuses ?? [];
  return {
    name: pod.metadata.name,
    uid: pod.metadata.uid ?? '',
    restartCount: statuses.reduce((sum, status) => sum + (status.restartCount ?? 0), 0),
    containerStartMs: containerStartMs(pod) ?? null,
  };
}

/** The Deployment's Pods now, all of them and the Ready ones, as records (none when the Deployment is gone). */
export async function deploymentPodRecords(
  cluster: Pick<ClusterClient, 'get' | 'listPods'>,
  namespace: string,
  name: string,
): Promise<{ pods: PodRecord[]; ready: PodRecord[] }> {
  const deployment = await cluster.get({ ...KINDS.deployment, namespace, name });
  if (deployment === undefined) return { pods: [], ready: [] };
  const { pods, ready } = await deploymentPods(cluster, deployment);
  return { pods: pods.map(podRecord), ready: ready.map(podRecord) };
}

/** The window the step was measured over (epoch ms). */
export interface EvidenceWindow {
  startMs: number;
  endMs: number;
}

/**
 * Check 1: each Pod's sample times (epoch ms, the sample at or before the window's start included) cover the window:
 * no gap overlapping it longer than (maxGapScrapeIntervals + ½) scrape intervals (half an interval of scrape jitter),
 * and a sample at or past its end. `scrapeSeconds` is the estimated scrape interval.
 */
export function checkCoverage(
  sampleTimesByPod: ReadonlyMap<string, readonly number[]>,
  window: EvidenceWindow,
  scrapeSeconds: number,
  expectedPods: readonly string[],
): string[] {
  const reasons: string[] = [];
  const maxGapMs = (EVIDENCE_RULES.maxGapScrapeIntervals + 0.5) * scrapeSeconds * 1000;
  const bound = `${EVIDENCE_RULES.maxGapScrapeIntervals} scrape intervals of ${fmt(scrapeSeconds, 1)} s`;
  for (const pod of expectedPods) {
    const times = [...new Set(sampleTimesByPod.get(pod) ?? [])].sort((a, b) => a - b);
    if (times.length === 0) {
      reasons.push(`AMP holds no sample of Pod ${pod} in the window`);
      continue;
    }
    // The window's start counts as a sample time when the Pod's first sample is after it.
    const anchored = (times[0] as number) > window.startMs ? [window.startMs, ...times] : times;
    let worst = { gapMs: 0, fromMs: 0 };
    for (let i = 1; i < anchored.length; i++) {
      const from = anchored[i - 1] as number;
      const to = anchored[i] as number;
      if (to <= window.startMs || from >= window.endMs) continue;
      if (to - from > worst.gapMs) worst = { gapMs: to - from, fromMs: from };
    }
    if (worst.gapMs > maxGapMs)
      reasons.push(
        `AMP's samples of Pod ${pod} have a gap of ${fmt(worst.gapMs / 1000, 1)} s from ` +
          `${fmt((worst.fromMs - window.startMs) / 1000, 1)} s into the window (longer than ${bound})`,
      );
    const last = times[times.length - 1] as number;
    if (last < window.endMs)
      reasons.push(
        `AMP's last sample of Pod ${pod} is ${fmt((window.endMs - last) / 1000, 1)} s before the window's end`,
      );
  }
  return reasons;
}

/**
 * Check 2: the Pods at the window's start (`before`) served it to its end: each still there (same uid), Ready, not
 * restarted; no other Pod Ready now; AMP's `pod` label set in the window is the same set.
 */
export function checkPods(
  before: readonly PodRecord[],
  now: { pods: readonly PodRecord[]; ready: readonly PodRecord[] },
  ampPods: readonly string[],
): string[] {
  const reasons: string[] = [];
  const beforeNames = new Set(before.map((pod) => pod.name));
  for (const pod of before) {
    const current = now.pods.find((p) => p.name === pod.name && p.uid === pod.uid);
    if (current === undefined) {
      reasons.push(`Pod ${pod.name} that served the step's start is gone (deleted or replaced)`);
      continue;
    }
    if (!now.ready.some((p) => p.uid === pod.uid)) reasons.push(`Pod ${pod.name} is no longer Ready`);
    if (current.restartCount > pod.restartCount)
      reasons.push(
        `Pod ${pod.name} restarted ${current.restartCount - pod.restartCount} time(s) during the step ` +
          '(a restarted engine is cold: not warmed up)',
      );
    else if (
      current.containerStartMs !== null &&
      pod.containerStartMs !== null &&
      current.containerStartMs !== pod.containerStartMs
    )
      reasons.push(`Pod ${pod.name}'s container started again during the step (cold: not warmed up)`);
  }
  for (const pod of now.ready)
    if (!beforeNames.has(pod.name))
      reasons.push(`Pod ${pod.name} is new since the step's start (a replacement is cold: not warmed up)`);
  for (const pod of ampPods)
    if (!beforeNames.has(pod))
      reasons.push(`AMP shows Pod ${pod} serving in the window, which was not Ready at the step's start`);
  return reasons;
}

/** What check 3 needs beside the step: the traffic the target's users sent, k6's rate, the request timeout. */
export interface CompletionContext {
  backgroundRps: number;
  k6RateRps: number;
  requestTimeoutSeconds: number;
}

/**
 * Check 3, for a step that was held and has a k6 summary (an early ending has none: skipped):
 * - k6's requests did not fail fast in numbers: more than maxFastFailedFraction failed while k6's p95 duration stayed
 *   below fastFailureFraction of the request timeout (a saturated replica's failures are timeouts);
 * - AMP's completions over the window (completedRps × the span it covers) are within completionTolerance ±
 *   completionSlackRequests ± the requests in flight at the window's edges of what k6 got back OK over the hold plus
 *   what the users sent (backgroundRps × span). In flight: k6's rate × its p95 duration (Little's law with a tail
 *   latency: a growing queue holds more at the end than on average), or the queue and batch AMP saw, the larger;
 *   those finish after the window, where k6 still counts them.
 */
export function checkCompletions(step: StepMeasurement, context: CompletionContext): string[] {
  const k6 = step.k6;
  if (k6 === null || (step.ending !== undefined && step.ending.kind !== 'held')) return [];
  const reasons: string[] = [];
  if (k6.httpReqs > 0) {
    const failed = k6.httpReqFailed / k6.httpReqs;
    const fast = k6.httpReqDurationMs.p95 < EVIDENCE_RULES.fastFailureFraction * context.requestTimeoutSeconds * 1000;
    if (failed > EVIDENCE_RULES.maxFastFailedFraction && fast)
      reasons.push(
        `k6 counted ${k6.httpReqFailed} of ${k6.httpReqs} requests failed (${pct(failed, 0)}, more than ` +
          `${pct(EVIDENCE_RULES.maxFastFailedFraction, 0)}) with its p95 at ${fmt(k6.httpReqDurationMs.p95 / 1000, 2)} s, ` +
          `below the ${fmt(context.requestTimeoutSeconds)} s timeout: errors, not saturation`,
      );
  }
  const spanSeconds = step.amp.completedSpanSeconds ?? step.holdSeconds;
  const ampCompleted = step.amp.completedRps * spanSeconds;
  const k6Ok = Math.max(0, k6.httpReqs - k6.httpReqFailed);
  const expected = k6Ok * Math.min(1, spanSeconds / step.holdSeconds) + context.backgroundRps * spanSeconds;
  const inFlight = Math.max(
    (context.k6RateRps * k6.httpReqDurationMs.p95) / 1000,
    step.amp.queueMax + (step.amp.runningLatestHalfMean ?? step.amp.runningMean ?? 0),
  );
  const allowance = EVIDENCE_RULES.completionTolerance * expected + EVIDENCE_RULES.completionSlackRequests + inFlight;
  reasons.push(...checkClientLatency(step));
  if (Math.abs(ampCompleted - expected) > allowance)
    reasons.push(
      `AMP counted ${fmt(ampCompleted, 0)} completions over ${fmt(spanSeconds, 1)} s where k6 got ${k6Ok} OK` +
        (context.backgroundRps > 0 ? ` and the users sent ${fmt(context.backgroundRps * spanSeconds, 0)}` : '') +
        ` (${fmt(expected, 0)} ± ${fmt(allowance, 0)}: ${pct(EVIDENCE_RULES.completionTolerance, 0)} + ` +
        `${EVIDENCE_RULES.completionSlackRequests} + ${fmt(inFlight, 0)} in flight)`,
    );
  return reasons;
}

/**
 * Check 3's last part: the load generator kept up. With no queue at the replica its latency is its service time, so
 * k6's mean duration far above vLLM's p95 (EVIDENCE_RULES.clientLatencyFactor and clientSlackSeconds) is time spent
 * in k6 or on the way: k6 sent late and counted late, and the step's figures describe k6, not the replica. With a
 * queue the check is skipped: requests still queued at the window's end finish after it, slow in k6 and absent from
 * AMP's window.
 */
export function checkClientLatency(step: StepMeasurement): string[] {
  const k6 = step.k6;
  const serverP95 = step.amp.p95E2eSeconds;
  if (k6 === null || serverP95 === null || step.amp.queueMax >= SATURATION_RULES.queueMaxFloor) return [];
  const clientMean = k6.httpReqDurationMs.avg / 1000;
  const bound = EVIDENCE_RULES.clientLatencyFactor * serverP95 + EVIDENCE_RULES.clientSlackSeconds;
  if (clientMean <= bound) return [];
  return [
    `k6's requests took ${fmt(clientMean, 2)} s on average where vLLM served them in ${fmt(serverP95, 2)} s at its ` +
      `p95 with at most ${fmt(step.amp.queueMax, 0)} queued (more than ${EVIDENCE_RULES.clientLatencyFactor} × p95 + ` +
      `${EVIDENCE_RULES.clientSlackSeconds} s): the time went to the load generator or the network, not the replica; ` +
      'give k6 more CPU (k6.resources, a node of its own through k6.nodeSelector) or run it nearer the target',
  ];
}

/** The sample times of each Pod's series (by its `pod` label), epoch ms. */
export function sampleTimesByPod(series: readonly RangeSeries[]): Map<string, number[]> {
  const byPod = new Map<string, number[]>();
  for (const one of series) {
    const pod = one.labels.pod ?? '';
    const times = byPod.get(pod) ?? [];
    for (const point of one.points)
      if (Number.isFinite(point.value) && point.value > 0) times.push(Math.round(point.value * 1000));
    byPod.set(pod, times);
  }
  return byPod;
}

export interface EvidenceDeps {
  source: MetricsSource;
  cluster: Pick<ClusterClient, 'get' | 'listPods'>;
}

export interface EvidenceContext extends CompletionContext {
  window: EvidenceWindow;
  nowMs: number;
  /** `$.load.servedBy`; absent in states written before it: the Pod check is skipped. */
  servedBy?: ServedBy;
  namespace: string;
  /** 1 for a rate's first try, 2 for its repeat. */
  attempt: number;
}

/** How far past the window's end AMP's samples are read: enough for a sample after the end at a 30 s scrape. */
const PAST_END_SECONDS = 90;
/**
 * How far before the window's start they are read: the scrape interval is the median spacing of these samples too, so
 * that a gap in a short window cannot be its own yardstick (a 5 s window with a 10 s gap and one sample before it
 * gave spacings of 1 s and 11 s, a "median" of 11 s, and a bound the gap was within).
 */
const BEFORE_START_SECONDS = 120;

/**
 * Runs the three checks for a measured step: the sample times of `vllm:num_requests_running` of each Pod (a range
 * query at a 1 s step of `timestamp()`: each point is the time of the sample it sees), the Pods now, and k6's counts.
 * Every sample time passes the shared AMP answer guard (Unix seconds: a negative time or ±Inf is a named error).
 */
export async function checkStepEvidence(
  deps: EvidenceDeps,
  input: CalibrationInput,
  step: StepMeasurement,
  context: EvidenceContext,
): Promise<StepEvidence> {
  const target = calibrationTarget(input);
  const { window } = context;
  const query = `timestamp(${vllmSelector(target, VLLM.numRequestsRunning)})`;
  const [series, latest] = await Promise.all([
    askAmp(`the sample times of ${target.name}`, async () =>
      guardSeries(
        await deps.source.range(query, {
          startMs: window.startMs - BEFORE_START_SECONDS * 1000,
          endMs: Math.max(window.endMs, Math.min(context.nowMs, window.endMs + PAST_END_SECONDS * 1000)),
          stepSeconds: 1,
        }),
        VALUE_DOMAIN.timestamp,
        query,
      ),
    ),
    // The newest sample of each series: the range's 1 s grid may end before it.
    askAmp(`the newest samples of ${target.name}`, async () =>
      guardSamples(await deps.source.instant(query, { timeMs: context.nowMs }), VALUE_DOMAIN.timestamp, query),
    ),
  ]);
  const byPod = sampleTimesByPod([
    ...series,
    ...latest.map((sample) => ({
      labels: sample.labels,
      points: [{ timestampMs: sample.timestampMs, value: sample.value }],
    })),
  ]);
  const scrapeSeconds = scrapeSecondsFromSampleTimes([...byPod.values()].map((t) => t.map((ms) => ms / 1000)));
  // Pods AMP shows serving in the window: a sample inside it (not only the one before its start).
  const ampPods = [...byPod.entries()]
    .filter(([, times]) => times.some((t) => t > window.startMs && t <= window.endMs))
    .map(([pod]) => pod)
    .sort();
  const expected = context.servedBy?.pods.map((pod) => pod.name) ?? ampPods;
  const reasons = checkCoverage(byPod, window, scrapeSeconds, expected);
  if (context.servedBy !== undefined) {
    // A step started on fewer Ready Pods than the test runs measures a replica short (one still starting is cold).
    if (context.servedBy.pods.length < input.testReplicas)
      reasons.push(
        `${context.servedBy.pods.length} of the ${input.testReplicas} test replica(s) were Ready at the step's start`,
      );
    const now = await deploymentPodRecords(deps.cluster, context.namespace, context.servedBy.deployment);
    reasons.push(...checkPods(context.servedBy.pods, now, ampPods));
  }
  reasons.push(...checkCompletions(step, context));
  return { ok: reasons.length === 0, reasons, attempt: context.attempt };
}

/** 1 + the earlier tries of this rate whose evidence failed. */
export function attemptOf(rateRps: number, earlier: readonly StepMeasurement[]): number {
  return 1 + earlier.filter((step) => sameRate(step.rateRps, rateRps) && step.evidence?.ok === false).length;
}

/** Whether a step's evidence held (a step measured before the checks existed counts as held). */
export function evidenceHeld(step: StepMeasurement): boolean {
  return step.evidence?.ok !== false;
}

/** Rates are compared to a thousandth of a request per second (they travel through JSON). */
export function sameRate(a: number, b: number): boolean {
  return Math.abs(a - b) < 1e-3;
}

async function askAmp<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof MetricsError && error.retryable)
      throw new CalibrationDependencyUnavailableError(`AMP did not answer the query for ${what}: ${error.message}`, {
        cause: error,
      });
    throw error;
  }
}
