import * as z from 'zod';
import { deploymentPods, jobCompletionMs } from '../../kube/index.js';
import { CalibrationReadinessTimeoutError } from '../errors.js';
import { readinessCheck } from '../measure.js';
import { NO_WARMUP, readJobSummary } from './k6Jobs.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, deploymentStateSchema, previousCheckSchema, warmupStateSchema } from './state.js';
import type { CalibrationStep } from './step.js';
import { requireDeployment } from './target.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'metricsSource'>;
const event = z.object({
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
export async function readinessGate(
  ports: Ports,
  { input, execution, deployment, warmup, previous }: z.output<typeof event>,
): Promise<ReadinessGateCheck> {
  const cluster = await ports.cluster(input.target);
  const nowMs = ports.clock.now();
  const startedAtMs = previous?.startedAtMs ?? nowMs;
  const attempts = (previous?.attempts ?? 0) + 1;

  const live = await requireDeployment(cluster, deployment.namespace, deployment.name);
  const pods = (await deploymentPods(cluster, live)).ready.map((pod) => pod.metadata.name);
  let warmupSummary = NO_WARMUP;
  let warmupEndedMs: number | undefined;
  if (warmup.job !== null) {
    const finished = await readJobSummary(cluster, warmup.job);
    warmupSummary = finished.summary;
    warmupEndedMs = jobCompletionMs(finished.job);
  }
  const result = await readinessCheck({ source: ports.metricsSource(input.target) }, input, {
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
  ports.logger.info('readiness gate', {
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

export const readinessGateStep = {
  name: 'readinessGate',
  label: 'ReadinessGate',
  placeholder: 'ReadinessGateFunctionArn',
  event,
  run: readinessGate,
} satisfies CalibrationStep<typeof event, ReadinessGateCheck, Ports>;
