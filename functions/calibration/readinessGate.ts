import * as z from 'zod';
import { CalibrationReadinessTimeoutError } from '../../shared/calibration/errors.js';
import { readinessCheck } from '../../shared/calibration/measure.js';
import type { CalibrationDeps } from './deps.js';
import { baseEventShape, deploymentStateSchema, parseEvent, previousCheckSchema, warmupStateSchema } from './event.js';
import { NO_WARMUP, readJobSummary } from './jobSummary.js';
import { readDeployment, readyPods } from './kube.js';

const eventSchema = z.object({
  ...baseEventShape,
  deployment: deploymentStateSchema,
  warmup: warmupStateSchema,
  previous: previousCheckSchema,
});

/** `$.readiness`: one look through the readiness gate. */
export interface ReadinessGateCheck {
  ready: boolean;
  /** One sentence per check (shared/calibration/measure.ts readinessCheck). */
  reasons: string[];
  pods: string[];
  attempts: number;
  /** When the gate was first tried (epoch ms): its time bound starts here. */
  startedAtMs: number;
  waitSeconds: number;
}

/**
 * ReadinessGate: every Ready Pod of the Deployment has series in AMP and the warmup's last requests are as fast as
 * its median (readinessCheck). Bounded by `readiness.timeoutSeconds` from the first try (by the clock): past it,
 * CalibrationReadinessTimeoutError with the reasons of the last try.
 */
export async function readinessGate(deps: CalibrationDeps, event: unknown): Promise<ReadinessGateCheck> {
  const { input, execution, deployment, warmup, previous } = parseEvent('ReadinessGate', eventSchema, event);
  const cluster = await deps.cluster(input.target);
  const nowMs = deps.clock.now();
  const startedAtMs = previous?.startedAtMs ?? nowMs;
  const attempts = (previous?.attempts ?? 0) + 1;

  const live = await readDeployment(cluster, deployment.namespace, deployment.name);
  const pods = await readyPods(cluster, live);
  let warmupSummary = NO_WARMUP;
  let warmupEndedMs: number | undefined;
  if (warmup.job !== null) {
    const finished = await readJobSummary(cluster, warmup.job);
    warmupSummary = finished.summary;
    const completed = Date.parse(
      (finished.job.status as { completionTime?: string } | undefined)?.completionTime ?? '',
    );
    if (Number.isFinite(completed)) warmupEndedMs = completed;
  }
  const result = await readinessCheck({ source: deps.metricsSource(input.target) }, input, {
    pods,
    warmup: warmupSummary,
    nowMs,
    ...(warmupEndedMs === undefined ? {} : { warmupEndedMs }),
  });
  const elapsedSeconds = (nowMs - startedAtMs) / 1000;
  if (!result.ready && elapsedSeconds > input.readiness.timeoutSeconds)
    throw new CalibrationReadinessTimeoutError(
      `the readiness gate did not open within readiness.timeoutSeconds (${input.readiness.timeoutSeconds} s; ` +
        `${attempts} tries): ${result.reasons.join('; ')}`,
    );
  deps.logger.info('readiness gate', {
    execution: execution.name,
    ready: result.ready,
    reasons: result.reasons,
    attempts,
  });
  return {
    ready: result.ready,
    reasons: result.reasons,
    pods,
    attempts,
    startedAtMs,
    waitSeconds: Math.max(1, Math.ceil(input.readiness.pollSeconds)),
  };
}
