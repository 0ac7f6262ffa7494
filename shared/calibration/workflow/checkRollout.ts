import * as z from 'zod';
import { rolloutStatus } from '../../kube/index.js';
import { CalibrationRolloutTimeoutError } from '../errors.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, deploymentStateSchema, previousCheckSchema } from './state.js';
import type { CalibrationStep } from './step.js';
import { requireDeployment } from './target.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster'>;
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
 * Deployment reports ProgressDeadlineExceeded, it throws CalibrationRolloutTimeoutError with the last reason.
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
  if (status.stuck) throw new CalibrationRolloutTimeoutError(`${where} cannot finish its rollout: ${status.reason}`);
  if (!status.done && elapsedSeconds > input.rollout.timeoutSeconds)
    throw new CalibrationRolloutTimeoutError(
      `${where} did not finish its rollout to ${deployment.testReplicas} replica(s) within ` +
        `rollout.timeoutSeconds (${input.rollout.timeoutSeconds} s; ${attempts} checks over ${elapsedSeconds.toFixed(1)} s): ` +
        status.reason,
    );
  ports.logger.info('rollout checked', {
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

export const checkRolloutStep = {
  name: 'checkRollout',
  label: 'CheckRollout',
  placeholder: 'CheckRolloutFunctionArn',
  event,
  run: checkRollout,
} satisfies CalibrationStep<typeof event, RolloutCheck, Ports>;
