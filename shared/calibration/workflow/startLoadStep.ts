import * as z from 'zod';
import { ensureJob } from '../../kube/index.js';
import { k6RateFor, MIN_K6_RPS } from '../background.js';
import { deploymentPodRecords } from '../evidence.js';
import { k6LoadJob } from '../../kube/manifests/index.js';
import { JOB_BOUND_SLACK_SECONDS, k6Request } from './k6Jobs.js';
import { EXECUTION_LABEL, executionNames } from './names.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import {
  baseEventShape,
  deploymentStateSchema,
  plannedStepSchema,
  warmupStateSchema,
  type LoadState,
} from './state.js';
import type { CalibrationStep } from './step.js';
import { requireHeld } from './target.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster'>;
const event = z.object({
  ...baseEventShape,
  deployment: deploymentStateSchema,
  warmup: warmupStateSchema,
  plan: plannedStepSchema,
});

/** k6's graceful stop (30 s) and start-up (60 s), as in the k6 load Job's default deadline. */
const K6_OVERHEAD_SECONDS = 90;

/**
 * StartLoadStep: the constant-arrival-rate k6 Job of the planned step, at the planned rate less the background the
 * target already serves (`calib-<hash>-s<index>`, labelled with the
 * execution). A Job already there (a retry) is returned, not created again: the same step never loads twice.
 */
export async function startLoadStep(
  ports: Ports,
  { input, execution, deployment, warmup, plan }: z.output<typeof event>,
): Promise<LoadState> {
  const names = executionNames(execution.name);
  const cluster = await ports.cluster(input.target);
  const name = names.loadJob(plan.index);
  // k6 takes whole seconds; the measurement window uses the same hold.
  const holdSeconds = Math.ceil(plan.holdSeconds);
  const requestTimeoutSeconds = Math.ceil(input.request.timeoutSeconds);
  const deadlineSeconds = holdSeconds + requestTimeoutSeconds + K6_OVERHEAD_SECONDS;
  // The strategy plans the rate the replica sees in all; the target's own traffic already offers part of it.
  const backgroundRps = deployment.background.rateRps;
  const k6RateRps = k6RateFor(plan.rateRps, backgroundRps);
  // The planned total, exactly (the strategy replays its plan against the steps' rates); more only when the users alone
  // offer more than the plan, and k6 adds its least.
  const clamped = plan.rateRps - backgroundRps < MIN_K6_RPS;
  const rateRps = clamped ? backgroundRps + k6RateRps : plan.rateRps;
  await requireHeld(cluster, deployment.namespace, deployment.name, names.label);
  // The Pods that serve the step from its start: MeasureStep checks the same ones served it to its end (evidence.ts).
  // Read before the Job exists, so a retry that finds the Job reads them again: still the step's start within a request.
  const { ready } = await deploymentPodRecords(cluster, deployment.namespace, deployment.name);
  const { created, createdAtMs } = await ensureJob(
    cluster,
    k6LoadJob({
      name,
      namespace: deployment.namespace,
      scriptConfigMap: warmup.configMap.name,
      targetUrl: deployment.serviceUrl,
      model: input.target.model,
      ...k6Request(input),
      requestTimeoutSeconds,
      rate: k6RateRps,
      durationSeconds: holdSeconds,
      preAllocatedVUs: input.plan.preAllocatedVUs,
      maxVUs: Math.max(input.plan.maxVUs, input.plan.preAllocatedVUs),
      labels: { [EXECUTION_LABEL]: names.label },
      activeDeadlineSeconds: deadlineSeconds,
    }),
    ports.clock.now(),
  );
  ports.logger.info(created ? 'load job created' : 'load job found (retry)', {
    execution: execution.name,
    job: name,
    rateRps,
    k6RateRps,
    backgroundRps,
    holdSeconds,
  });
  return {
    job: {
      namespace: deployment.namespace,
      name,
      component: 'load',
      createdAtMs,
      boundSeconds: deadlineSeconds + JOB_BOUND_SLACK_SECONDS,
    },
    index: plan.index,
    rateRps,
    k6RateRps,
    backgroundRps,
    holdSeconds,
    ...(plan.stableAfterFraction === undefined ? {} : { stableAfterFraction: plan.stableAfterFraction }),
    ...(deployment.maxNumSeqs === undefined ? {} : { maxNumSeqs: deployment.maxNumSeqs }),
    servedBy: { deployment: deployment.name, pods: ready },
  };
}

export const startLoadStepStep = {
  name: 'startLoadStep',
  label: 'StartLoadStep',
  placeholder: 'StartLoadStepFunctionArn',
  event,
  run: startLoadStep,
} satisfies CalibrationStep<typeof event, LoadState, Ports>;
