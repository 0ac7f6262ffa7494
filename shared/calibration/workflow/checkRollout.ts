import * as z from 'zod';
import { deploymentPods, rolloutStatus, type ClusterClient, type KubeObject } from '../../kube/index.js';
import type { CalibrationInput } from '../input.js';
import { podsWithoutSeries } from '../measure.js';
import { calibrationTarget, readinessQueries } from '../stepQueries.js';
import { CalibrationRolloutTimeoutError } from '../errors.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, deploymentStateSchema, previousCheckSchema } from './state.js';
import type { CalibrationStep } from './step.js';
import { noGpuError, unschedulableReason } from './shadow.js';
import { requireDeployment } from './target.js';

/**
 * The Ready Pods of the Deployment that have no vLLM series in AMP at `nowMs`; the answer passes the shared AMP answer
 * guard (podsWithoutSeries: two series for one Pod, a negative count or ±Inf is a named error).
 */
async function podsNotInAmp(
  ports: Ports,
  input: CalibrationInput,
  cluster: ClusterClient,
  live: KubeObject,
  nowMs: number,
): Promise<string[]> {
  const { ready } = await deploymentPods(cluster, live);
  const target = { ...calibrationTarget(input), deployment: live.metadata.name };
  const query = readinessQueries(target, 1).podsWithSeries;
  const answer = await ports.metricsSource(input.target).instant(query, { timeMs: nowMs });
  return podsWithoutSeries(
    ready.map((pod) => pod.metadata.name),
    answer,
    query,
  );
}

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'metricsSource'>;
const event = z.object({
  ...baseEventShape,
  deployment: deploymentStateSchema,
  previous: previousCheckSchema,
});

/** `$.rollout`: one look at the rollout. */
export interface RolloutCheck {
  done: boolean;
  reason: string;
  attempts: number;
  /** Seconds since Deploy finished. */
  elapsedSeconds: number;
  /** The next poll (WaitRollout's SecondsPath: whole seconds). */
  waitSeconds: number;
}

/**
 * CheckRollout: whether the Deployment's rollout to `testReplicas` finished (kubectl's rollout-status rules). Bounded:
 * past `rollout.timeoutSeconds` after Deploy (by the clock, so shortened Waits do not shorten it), or once the
 * Deployment reports ProgressDeadlineExceeded, it throws CalibrationRolloutTimeoutError with the last reason; for a
 * shadow copy whose Pod the scheduler could not place, CalibrationShadowNoGpuError with the scheduler's message.
 */
export async function checkRollout(
  ports: Ports,
  { input, execution, deployment, previous }: z.output<typeof event>,
): Promise<RolloutCheck> {
  const cluster = await ports.cluster(input.target);
  const live = await requireDeployment(cluster, deployment.namespace, deployment.name);
  const status = rolloutStatus(live);
  const attempts = (previous?.attempts ?? 0) + 1;
  const elapsedSeconds = Math.max(0, (ports.clock.now() - deployment.startedAtMs) / 1000);
  const where = `Deployment ${deployment.namespace}/${deployment.name}`;
  const timedOut = !status.done && elapsedSeconds > input.rollout.timeoutSeconds;
  // A shadow copy that waits for a GPU says so: the fix is capacity (or adopt mode), not the Deployment.
  if ((status.stuck || timedOut) && deployment.shadowOf !== undefined) {
    const unschedulable = await unschedulableReason(cluster, live);
    if (unschedulable !== undefined) throw noGpuError(live, unschedulable, input.rollout.timeoutSeconds);
  }
  if (status.stuck) throw new CalibrationRolloutTimeoutError(`${where} cannot finish its rollout: ${status.reason}`);
  if (timedOut)
    throw new CalibrationRolloutTimeoutError(
      `${where} did not finish its rollout to ${deployment.testReplicas} replica(s) within ` +
        `rollout.timeoutSeconds (${input.rollout.timeoutSeconds} s; ${attempts} checks over ${elapsedSeconds.toFixed(1)} s): ` +
        status.reason,
    );
  // Done only once AMP holds a sample of every Ready Pod: the warmup that follows must be inside their scraped history
  // (`increase` cannot count requests a new Pod served before its first scrape), so the readiness gate can see it.
  const unscraped = status.done ? await podsNotInAmp(ports, input, cluster, live, ports.clock.now()) : [];
  const done = status.done && unscraped.length === 0;
  const reason = done
    ? status.reason
    : status.done
      ? `${status.reason}; waiting for AMP to hold a first scrape of ${unscraped.join(', ')}`
      : status.reason;
  if (!done && elapsedSeconds > input.rollout.timeoutSeconds)
    throw new CalibrationRolloutTimeoutError(
      `${where} rolled out, but AMP holds no vLLM series of ${unscraped.join(', ')} after rollout.timeoutSeconds ` +
        `(${input.rollout.timeoutSeconds} s): check that a ServiceMonitor selected by Prometheus scrapes its Service ` +
        `(vllm-pilot preflight, item 2), and target.model (${JSON.stringify(input.target.model)})`,
    );
  ports.logger.info('rollout checked', { execution: execution.name, done, reason, attempts });
  return {
    done,
    reason,
    attempts,
    elapsedSeconds,
    waitSeconds: Math.max(1, Math.ceil(input.rollout.pollSeconds)),
  };
}

export const checkRolloutStep = {
  name: 'checkRollout',
  label: 'CheckRollout',
  placeholder: 'CheckRolloutFunctionArn',
  event,
  run: checkRollout,
} satisfies CalibrationStep<typeof event, RolloutCheck, Ports>;
