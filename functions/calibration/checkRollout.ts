import * as z from 'zod';
import { CalibrationRolloutTimeoutError } from '../../shared/calibration/errors.js';
import type { CalibrationDeps } from './deps.js';
import { baseEventShape, deploymentStateSchema, parseEvent, previousCheckSchema } from './event.js';
import { readDeployment, rolloutStatus } from './kube.js';

const eventSchema = z.object({
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
 * Deployment reports ProgressDeadlineExceeded, it throws CalibrationRolloutTimeoutError with the last reason.
 */
export async function checkRollout(deps: CalibrationDeps, event: unknown): Promise<RolloutCheck> {
  const { input, execution, deployment, previous } = parseEvent('CheckRollout', eventSchema, event);
  const cluster = await deps.cluster(input.target);
  const live = await readDeployment(cluster, deployment.namespace, deployment.name);
  const status = rolloutStatus(live);
  const attempts = (previous?.attempts ?? 0) + 1;
  const elapsedSeconds = Math.max(0, (deps.clock.now() - deployment.startedAtMs) / 1000);
  const where = `Deployment ${deployment.namespace}/${deployment.name}`;
  if (status.stuck) throw new CalibrationRolloutTimeoutError(`${where} cannot finish its rollout: ${status.reason}`);
  if (!status.done && elapsedSeconds > input.rollout.timeoutSeconds)
    throw new CalibrationRolloutTimeoutError(
      `${where} did not finish its rollout to ${deployment.testReplicas} replica(s) within ` +
        `rollout.timeoutSeconds (${input.rollout.timeoutSeconds} s; ${attempts} checks over ${elapsedSeconds.toFixed(1)} s): ` +
        status.reason,
    );
  deps.logger.info('rollout checked', {
    execution: execution.name,
    done: status.done,
    reason: status.reason,
    attempts,
  });
  return {
    done: status.done,
    reason: status.reason,
    attempts,
    elapsedSeconds,
    waitSeconds: Math.max(1, Math.ceil(input.rollout.pollSeconds)),
  };
}
