import type { Clock } from '../../clock/index.js';
import { K6_REST, parseK6Metrics, type ClusterClient } from '../../kube/index.js';
import { decideK6Signal, K6_SIGNAL_RULES, type K6Reading, type K6SignalDecision } from '../k6Signal.js';
import type { EarlyStopSettings } from '../input.js';
import type { WatchState } from './state.js';

/** A k6 read that takes longer than this is abandoned: the look goes on with AMP. */
const K6_READ_TIMEOUT_MS = 5_000;

export interface K6LookInput {
  cluster: ClusterClient;
  clock: Clock;
  namespace: string;
  /** The load Job's name (readings of an earlier look at another Job are not carried over) and its Pod's. */
  job: string;
  pod: string;
  previous: WatchState | null;
  loadStartMs: number;
  offeredRps: number;
  plannedHoldSeconds: number;
  settings: EarlyStopSettings;
}

export interface K6Look {
  /** This step's readings, the new one included when the read succeeded (the latest keptReadings). */
  readings: K6Reading[];
  decision: K6SignalDecision;
  /** What the look saw, for the look's reason: the decision's reason, or why k6 could not be read. */
  note: string;
}

/**
 * Reads k6's live metrics (`GET /v1/metrics` through the API server's Pod proxy: RBAC `pods/proxy` get), appends
 * the reading to this step's, and asks shared/calibration/k6Signal.ts whether the step is saturated already. A failed
 * read is not fatal: the note says why and the decision is `continue`, so the look falls back to AMP.
 */
export async function lookAtK6(input: K6LookInput): Promise<K6Look> {
  const { cluster, clock, previous } = input;
  const carried = previous?.job === input.job ? (previous.k6Readings ?? []) : [];
  let readings = carried;
  let failure: string | undefined;
  try {
    const body = await cluster.proxyGet(
      { namespace: input.namespace, pod: input.pod, port: K6_REST.port, path: K6_REST.metricsPath },
      { signal: AbortSignal.timeout(K6_READ_TIMEOUT_MS) },
    );
    const live = parseK6Metrics(body);
    const reading: K6Reading = {
      tMs: clock.now(),
      vus: live.vus,
      iterations: live.iterations,
      droppedIterations: live.droppedIterations,
      httpReqs: live.httpReqs,
      ...(live.httpReqDurationMs === null ? {} : { minDurationMs: live.httpReqDurationMs.min }),
    };
    readings = [...carried, reading].slice(-K6_SIGNAL_RULES.keptReadings);
  } catch (error) {
    // Any failure (RBAC, a k6 without --address, an unreadable answer, a timeout): AMP still decides.
    failure = `k6's live metrics could not be read (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}); AMP decides alone`;
  }
  const decision = decideK6Signal(readings, {
    offeredRps: input.offeredRps,
    loadStartMs: input.loadStartMs,
    nowMs: clock.now(),
    plannedHoldSeconds: input.plannedHoldSeconds,
    settings: input.settings,
  });
  if (failure !== undefined) return { readings, decision: { action: 'continue', reason: failure }, note: failure };
  return { readings, decision, note: decision.reason };
}
