import * as z from 'zod';
import { k6ScriptConfigMap } from '../../shared/kube/manifests/k6ScriptConfigMap.js';
import { k6WarmupJob } from '../../shared/kube/manifests/k6WarmupJob.js';
import type { KubeObject } from '../../shared/kube/types.js';
import type { CalibrationDeps } from './deps.js';
import { baseEventShape, deploymentStateSchema, parseEvent, type WarmupState } from './event.js';
import { ensureJob } from './kube.js';
import { EXECUTION_LABEL, executionNames } from './names.js';

const eventSchema = z.object({ ...baseEventShape, deployment: deploymentStateSchema });

/** k6 Jobs stop on their own (activeDeadlineSeconds); CheckJob allows this much more before giving up on one. */
export const JOB_BOUND_SLACK_SECONDS = 60;

/**
 * StartWarmup: the ConfigMap with the k6 script and the warmup Job (1 VU sending `warmup.requests` requests one after
 * the other, as the guide's warmup does), both labelled with the execution. A Job already there (a retry) is
 * returned, not created again. With `warmup.requests` 0 there is no Job.
 */
export async function startWarmup(deps: CalibrationDeps, event: unknown): Promise<WarmupState> {
  const { input, execution, deployment } = parseEvent('StartWarmup', eventSchema, event);
  const names = executionNames(execution.name);
  const cluster = await deps.cluster(input.target);
  const namespace = deployment.namespace;

  const configMap = withLabel(k6ScriptConfigMap({ name: names.configMap, namespace }), names.label);
  await cluster.apply(configMap);
  if (input.warmup.requests === 0) {
    deps.logger.info('warmup skipped (warmup.requests is 0)', { execution: execution.name });
    return { configMap: { namespace, name: names.configMap }, job: null };
  }

  const deadlineSeconds = Math.ceil(input.warmup.timeoutSeconds);
  const { created, createdAtMs } = await ensureJob(
    cluster,
    k6WarmupJob({
      name: names.warmupJob,
      namespace,
      scriptConfigMap: names.configMap,
      targetUrl: deployment.serviceUrl,
      model: input.target.model,
      promptTokens: input.request.promptTokens,
      maxTokens: input.request.maxTokens,
      requestTimeoutSeconds: Math.ceil(input.request.timeoutSeconds),
      iterations: input.warmup.requests,
      vus: 1,
      labels: { [EXECUTION_LABEL]: names.label },
      activeDeadlineSeconds: deadlineSeconds,
    }),
    deps.clock.now(),
  );
  deps.logger.info(created ? 'warmup job created' : 'warmup job found (retry)', {
    execution: execution.name,
    job: names.warmupJob,
  });
  return {
    configMap: { namespace, name: names.configMap },
    job: {
      namespace,
      name: names.warmupJob,
      component: 'warmup',
      createdAtMs,
      boundSeconds: deadlineSeconds + JOB_BOUND_SLACK_SECONDS,
    },
  };
}

/** The object with the execution label added (the generators take no extra labels for ConfigMaps). */
export function withLabel(object: KubeObject, label: string): KubeObject {
  return {
    ...object,
    metadata: { ...object.metadata, labels: { ...object.metadata.labels, [EXECUTION_LABEL]: label } },
  };
}
