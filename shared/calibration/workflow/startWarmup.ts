import * as z from 'zod';
import { ensureJob } from '../../kube/index.js';
import { k6ScriptConfigMap, k6WarmupJob } from '../../kube/manifests/index.js';
import { JOB_BOUND_SLACK_SECONDS, k6Request, withExecutionLabel } from './k6Jobs.js';
import { EXECUTION_LABEL, executionNames } from './names.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, deploymentStateSchema, type WarmupState } from './state.js';
import type { CalibrationStep } from './step.js';
import { requireHeld } from './target.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster'>;
const event = z.object({ ...baseEventShape, deployment: deploymentStateSchema });

/**
 * StartWarmup: the ConfigMap with the k6 script and the warmup Job (1 VU sending `warmup.requests` requests one after
 * the other, as the guide's warmup does), both labelled with the execution. A Job already there (a retry) is
 * returned, not created again. With `warmup.requests` 0 there is no Job.
 */
export async function startWarmup(
  ports: Ports,
  { input, execution, deployment }: z.output<typeof event>,
): Promise<WarmupState> {
  const names = executionNames(execution.name);
  const cluster = await ports.cluster(input.target);
  const namespace = deployment.namespace;
  await requireHeld(cluster, namespace, deployment.name, names.label);

  const configMap = withExecutionLabel(k6ScriptConfigMap({ name: names.configMap, namespace }), names.label);
  await cluster.apply(configMap);
  if (input.warmup.requests === 0) {
    ports.logger.info('warmup skipped (warmup.requests is 0)', { execution: execution.name });
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
      ...k6Request(input),
      requestTimeoutSeconds: Math.ceil(input.request.timeoutSeconds),
      iterations: input.warmup.requests,
      vus: 1,
      labels: { [EXECUTION_LABEL]: names.label },
      activeDeadlineSeconds: deadlineSeconds,
    }),
    ports.clock.now(),
  );
  ports.logger.info(created ? 'warmup job created' : 'warmup job found (retry)', {
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

export const startWarmupStep = {
  name: 'startWarmup',
  label: 'StartWarmup',
  placeholder: 'StartWarmupFunctionArn',
  event,
  run: startWarmup,
} satisfies CalibrationStep<typeof event, WarmupState, Ports>;
