import * as z from 'zod';
import { KINDS, type ClusterClient } from '../../kube/index.js';
import { leaseExpired, parseLease } from './calibrationLease.js';
import { releaseTarget, type CleanupResult } from './cleanup.js';
import { CALIBRATION_ANNOTATIONS } from './names.js';
import { shadowDeploymentName } from '../measuredDeployment.js';
import { silenceTargetKey } from '../../alerts/silences/index.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import type { CalibrationFunction } from './step.js';

/** An execution's status as Step Functions' DescribeExecution gives it; null when it does not know the execution. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE' | null;

/** Where the sweep learns whether an execution still runs (Step Functions in AWS, the local runner locally). */
export interface ExecutionStatusPort {
  status(executionArn: string): Promise<ExecutionStatus>;
}

/** A Deployment the sweep looks at: the stack's targets (TARGETS), each in the function's region. */
export interface SweepTarget {
  name: string;
  cluster: string;
  region: string;
  namespace: string;
  deployment: string;
}

export type SweepPorts = BasePorts &
  Pick<CalibrationPorts, 'silences'> & {
    cluster(target: { cluster: string; region: string }): Promise<ClusterClient>;
    executions: ExecutionStatusPort;
  };

/** What the sweep decided for one target, with the reason. */
export interface SweepDecision {
  target: string;
  action: 'released' | 'kept' | 'none';
  reason: string;
  execution?: string;
  cleanup?: CleanupResult;
}

const event = z.object({}).passthrough();

/**
 * The scheduled sweep: for each target whose Deployment (or its shadow copy) carries a calibration's mark, releases it (releaseTarget:
 * KEDA back in charge first) when its execution has ended (any status but RUNNING, which includes PENDING_REDRIVE: a
 * redrive would find its objects gone and fail cleanly), or, when Step Functions does not know the execution (it ran
 * from a laptop, or its history expired), when the lease has expired. A mark without a readable lease (written by an
 * older version, or edited) is left alone and reported: nothing says when it may go. One target's failure is
 * reported and does not stop the others.
 */
export async function sweepLeases(ports: SweepPorts, targets: readonly SweepTarget[]): Promise<SweepDecision[]> {
  const decisions: SweepDecision[] = [];
  for (const target of targets) {
    try {
      decisions.push(...(await sweepTarget(ports, target)));
    } catch (error) {
      decisions.push({
        target: target.name,
        action: 'kept',
        reason: `not swept: ${(error as Error).name}: ${(error as Error).message.split('\n')[0]}`,
      });
    }
  }
  ports.logger.info('lease sweep', { decisions });
  return decisions;
}

/** The target's Deployment, and its shadow copy when there is one (deploy.mode shadow holds the copy, not the target). */
async function sweepTarget(ports: SweepPorts, target: SweepTarget): Promise<SweepDecision[]> {
  const cluster = await ports.cluster(target);
  const decisions = [await sweepDeployment(ports, cluster, target, target.deployment, target.name)];
  const copy = shadowDeploymentName(target.deployment);
  if ((await cluster.get({ ...KINDS.deployment, namespace: target.namespace, name: copy })) !== undefined)
    decisions.push(await sweepDeployment(ports, cluster, target, copy, `${target.name} (shadow copy ${copy})`));
  return decisions;
}

async function sweepDeployment(
  ports: SweepPorts,
  cluster: ClusterClient,
  target: SweepTarget,
  deployment: string,
  what: string,
): Promise<SweepDecision> {
  const { namespace } = target;
  const live = await cluster.get({ ...KINDS.deployment, namespace, name: deployment });
  const annotations = live?.metadata.annotations ?? {};
  const mark = annotations[CALIBRATION_ANNOTATIONS.execution];
  if (live === undefined || mark === undefined)
    return { target: what, action: 'none', reason: live === undefined ? 'no Deployment' : 'not calibrating' };
  const lease = parseLease(annotations[CALIBRATION_ANNOTATIONS.lease]);
  if (lease === undefined)
    return {
      target: what,
      action: 'kept',
      execution: mark,
      reason:
        `marked by ${JSON.stringify(mark)} without a readable lease (${CALIBRATION_ANNOTATIONS.lease}): ` +
        'run `vllm-pilot calibrate cleanup` once that execution is known to have ended',
    };
  const status = await ports.executions.status(lease.executionArn);
  const expired = leaseExpired(lease, ports.clock.now());
  if (status === 'RUNNING' || (status === null && !expired))
    return {
      target: what,
      action: 'kept',
      execution: lease.execution,
      reason:
        status === 'RUNNING'
          ? 'its execution is running'
          : `its execution is unknown to Step Functions and the lease runs until ${lease.expires}`,
    };
  const cleanup = await releaseTarget(ports, {
    cluster,
    namespace,
    deployment,
    scaledObject: lease.scaledObject,
    executionName: lease.execution,
    backgroundRps: null,
    silenceTarget: silenceTargetKey(target),
  });
  return {
    target: what,
    action: 'released',
    execution: lease.execution,
    reason:
      status === null
        ? `the lease expired at ${lease.expires} and Step Functions does not know the execution`
        : `its execution ended ${status} without releasing it`,
    cleanup,
  };
}

/** The sweep as a function of the stack: its targets come with its ports (TARGETS, read once per container). */
export const sweepLeasesFunction = {
  name: 'sweepLeases',
  label: 'SweepLeases',
  event,
  run: (ports: SweepPorts & { targets: readonly SweepTarget[] }) => sweepLeases(ports, ports.targets),
} satisfies CalibrationFunction<typeof event, SweepDecision[], SweepPorts & { targets: readonly SweepTarget[] }>;
