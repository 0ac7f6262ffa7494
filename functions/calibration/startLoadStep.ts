import * as z from 'zod';
import { k6LoadJob } from '../../shared/kube/manifests/k6LoadJob.js';
import type { CalibrationDeps } from './deps.js';
import { CalibrationEventInvalidError } from './errors.js';
import {
  baseEventShape,
  deploymentStateSchema,
  parseEvent,
  planStateSchema,
  warmupStateSchema,
  type LoadState,
} from './event.js';
import { ensureJob } from './kube.js';
import { EXECUTION_LABEL, executionNames } from './names.js';
import { JOB_BOUND_SLACK_SECONDS } from './startWarmup.js';

const eventSchema = z.object({
  ...baseEventShape,
  deployment: deploymentStateSchema,
  warmup: warmupStateSchema,
  plan: planStateSchema,
});

/** k6's graceful stop (30 s) and start-up (60 s), as in the k6 load Job's default deadline. */
const K6_OVERHEAD_SECONDS = 90;

/**
 * StartLoadStep: the constant-arrival-rate k6 Job of the planned step (`calib-<hash>-s<index>`, labelled with the
 * execution). A Job already there (a retry) is returned, not created again: the same step never loads twice.
 */
export async function startLoadStep(deps: CalibrationDeps, event: unknown): Promise<LoadState> {
  const { input, execution, deployment, warmup, plan } = parseEvent('StartLoadStep', eventSchema, event);
  if (plan.done)
    throw new CalibrationEventInvalidError('StartLoadStep', ['event.plan.done: is true: no step to start']);
  const names = executionNames(execution.name);
  const cluster = await deps.cluster(input.target);
  const name = names.loadJob(plan.index);
  // k6 takes whole seconds; the measurement window uses the same hold.
  const holdSeconds = Math.ceil(plan.holdSeconds);
  const requestTimeoutSeconds = Math.ceil(input.request.timeoutSeconds);
  const deadlineSeconds = holdSeconds + requestTimeoutSeconds + K6_OVERHEAD_SECONDS;
  const { created, createdAtMs } = await ensureJob(
    cluster,
    k6LoadJob({
      name,
      namespace: deployment.namespace,
      scriptConfigMap: warmup.configMap.name,
      targetUrl: deployment.serviceUrl,
      model: input.target.model,
      promptTokens: input.request.promptTokens,
      maxTokens: input.request.maxTokens,
      requestTimeoutSeconds,
      rate: plan.rateRps,
      durationSeconds: holdSeconds,
      preAllocatedVUs: input.plan.preAllocatedVUs,
      maxVUs: Math.max(input.plan.maxVUs, input.plan.preAllocatedVUs),
      labels: { [EXECUTION_LABEL]: names.label },
      activeDeadlineSeconds: deadlineSeconds,
    }),
    deps.clock.now(),
  );
  deps.logger.info(created ? 'load job created' : 'load job found (retry)', {
    execution: execution.name,
    job: name,
    rateRps: plan.rateRps,
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
    rateRps: plan.rateRps,
    holdSeconds,
    ...(plan.stableAfterFraction === undefined ? {} : { stableAfterFraction: plan.stableAfterFraction }),
  };
}
