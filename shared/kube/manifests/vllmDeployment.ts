import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { KubeObject } from '../types.js';
import { DO_NOT_DISRUPT, vllmObjectLabels, vllmPodLabels, vllmSelectorLabels } from './labels.js';
import { parseVllmDeploymentInput, type VllmDeploymentInputSpec } from './vllmInput.js';
import { WARMUP_ANNOTATION, warmupReadinessScript, warmupScript } from './warmup.js';

/** The name of the vLLM container and of its serving port. */
export const VLLM_CONTAINER = { name: 'vllm', portName: 'http', healthPath: '/health' } as const;

/** Probe timing: readiness is checked often so a replica joins the Service soon after it can serve. */
const PROBE = {
  periodSeconds: 10,
  timeoutSeconds: 5,
  readinessPeriodSeconds: 5,
  readinessFailureThreshold: 3,
} as const;

/**
 * The vLLM Deployment. Deterministic: the same input gives the same object (no timestamps or hashes in the Pod
 * template), so re-applying it never starts a rollout.
 */
export function vllmDeployment(spec: VllmDeploymentInputSpec): KubeObject {
  const input = parseVllmDeploymentInput(spec);
  const args = [
    '--model',
    input.model,
    '--served-model-name',
    input.servedModelName,
    '--gpu-memory-utilization',
    String(input.gpuMemoryUtilization),
    '--max-model-len',
    String(input.maxModelLen),
    ...(input.maxNumSeqs === undefined ? [] : ['--max-num-seqs', String(input.maxNumSeqs)]),
    // vLLM uses one GPU unless told to shard the model across the ones it was given.
    ...(input.gpus > 1 ? ['--tensor-parallel-size', String(input.gpus)] : []),
    '--port',
    String(input.port),
    ...input.extraArgs,
  ];
  const probe = { httpGet: { path: VLLM_CONTAINER.healthPath, port: VLLM_CONTAINER.portName } };
  const envNames = Object.keys(input.env).sort();
  const container: IContainer = {
    name: VLLM_CONTAINER.name,
    image: input.image,
    args,
    ports: [{ name: VLLM_CONTAINER.portName, containerPort: input.port, protocol: 'TCP' }],
    ...(envNames.length > 0 ? { env: envNames.map((name) => ({ name, value: input.env[name] ?? '' })) } : {}),
    resources: { limits: { 'nvidia.com/gpu': String(input.gpus) } },
    // Readiness waits for the model to load; until then the startup probe holds liveness/readiness checks off.
    startupProbe: {
      ...probe,
      periodSeconds: PROBE.periodSeconds,
      timeoutSeconds: PROBE.timeoutSeconds,
      failureThreshold: Math.ceil(input.startupTimeoutSeconds / PROBE.periodSeconds),
    },
    // With warmup on, Ready also needs the marker the postStart hook writes after its requests.
    readinessProbe: {
      ...(input.warmup === false ? probe : { exec: { command: ['/bin/sh', '-c', warmupReadinessScript(input.port)] } }),
      periodSeconds: PROBE.readinessPeriodSeconds,
      timeoutSeconds: PROBE.timeoutSeconds,
      failureThreshold: PROBE.readinessFailureThreshold,
    },
    ...(input.warmup === false
      ? {}
      : {
          lifecycle: {
            postStart: {
              exec: {
                command: [
                  '/bin/sh',
                  '-c',
                  warmupScript({ requests: input.warmup.requests, port: input.port, model: input.servedModelName }),
                ],
              },
            },
          },
        }),
    // Tensor parallelism exchanges tensors through shared memory; the container default (64 MiB) is too small.
    ...(input.gpus > 1 ? { volumeMounts: [{ name: 'dshm', mountPath: '/dev/shm' }] } : {}),
  };
  const deployment: IDeployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: input.name, namespace: input.namespace, labels: vllmObjectLabels(input.name) },
    spec: {
      ...(input.replicas === null ? {} : { replicas: input.replicas }),
      selector: { matchLabels: vllmSelectorLabels(input.name) },
      template: {
        metadata: {
          labels: vllmPodLabels(input.name),
          annotations: {
            ...DO_NOT_DISRUPT,
            ...(input.warmup === false ? {} : { [WARMUP_ANNOTATION]: String(input.warmup.requests) }),
          },
        },
        spec: {
          ...(input.nodeSelector === undefined ? {} : { nodeSelector: input.nodeSelector }),
          ...(input.tolerations.length > 0 ? { tolerations: input.tolerations } : {}),
          containers: [container],
          ...(input.gpus > 1 ? { volumes: [{ name: 'dshm', emptyDir: { medium: 'Memory' } }] } : {}),
        },
      },
    },
  };
  return deployment as KubeObject;
}
