import type { IJob } from 'kubernetes-models/batch/v1/Job';
import * as z from 'zod';
import { K6_ENV, K6_IMAGE, K6_REST } from '../k6.js';
import type { KubeObject } from '../types.js';
import { K6_REQUEST_DEFAULTS, K6_SCRIPT } from './k6Script.js';
import { DEFAULT_K6_SCRIPT_CONFIGMAP } from './k6ScriptConfigMap.js';
import { DO_NOT_DISRUPT, MANAGED_BY } from './labels.js';
import { dns1123Label, integer, requiredString } from './vllmInput.js';

/** Finished Jobs (and their Pods and logs) are kept this long for reading, then garbage-collected. */
export const K6_JOB_DEFAULTS = { ttlSecondsAfterFinished: 3600 } as const;

/** The label that says what a k6 Job does. */
export const K6_COMPONENT_LABEL = 'app.kubernetes.io/component';

const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Fields both k6 Jobs take. */
export const k6JobCommonShape = {
  name: dns1123Label('the Job name'),
  namespace: dns1123Label('the namespace').default('default'),
  scriptConfigMap: dns1123Label('the ConfigMap holding the k6 script').default(DEFAULT_K6_SCRIPT_CONFIGMAP),
  /** The vLLM Service's base URL, e.g. `http://vllm-inference-svc.default.svc:8000`. */
  targetUrl: requiredString('the base URL of the vLLM Service, e.g. http://vllm-inference-svc.default.svc:8000').refine(
    (value) => /^https?:\/\/[^/\s]+/.test(value),
    { error: 'must be an http(s) URL such as http://vllm-inference-svc.default.svc:8000' },
  ),
  /** The `model` of each request: the served model name. */
  model: requiredString('the served model name'),
  promptTokens: integer(1).optional(),
  maxTokens: integer(1).default(K6_REQUEST_DEFAULTS.maxTokens),
  requestTimeoutSeconds: integer(1).default(K6_REQUEST_DEFAULTS.requestTimeoutSeconds),
  /** Extra labels on the Job and its Pod, e.g. the execution id, so a cleanup can select them. */
  labels: z
    .record(
      z.string(),
      z.string().regex(LABEL_VALUE, { error: 'is not a label value (up to 63 alphanumerics, "-", "_", ".")' }),
    )
    .default(() => ({})),
  ttlSecondsAfterFinished: integer(0).default(K6_JOB_DEFAULTS.ttlSecondsAfterFinished),
  /** Hard stop for the Job; default: enough for the planned run plus one request timeout and k6's graceful stop. */
  activeDeadlineSeconds: integer(1).optional(),
};

export interface K6JobParts {
  name: string;
  namespace: string;
  scriptConfigMap: string;
  component: 'warmup' | 'load';
  labels: Record<string, string>;
  ttlSecondsAfterFinished: number;
  activeDeadlineSeconds: number;
  /** K6_ENV values, by K6_ENV key. */
  env: Partial<Record<keyof typeof K6_ENV, string | number>>;
}

/**
 * Builds a k6 Job: grafana/k6 runs the mounted script once (backoffLimit 0: a failed measurement is not re-run), with
 * its REST API on port K6_REST.port.
 */
export function buildK6Job(parts: K6JobParts): KubeObject {
  const labels = {
    ...parts.labels,
    'app.kubernetes.io/name': 'k6',
    [K6_COMPONENT_LABEL]: parts.component,
    ...MANAGED_BY,
  };
  const env = (Object.keys(K6_ENV) as Array<keyof typeof K6_ENV>)
    .filter((key) => parts.env[key] !== undefined)
    .map((key) => ({ name: K6_ENV[key], value: String(parts.env[key]) }));
  const job: IJob = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: parts.name, namespace: parts.namespace, labels },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: parts.ttlSecondsAfterFinished,
      activeDeadlineSeconds: parts.activeDeadlineSeconds,
      template: {
        // A consolidated node would cut the measurement short.
        metadata: { labels, annotations: { ...DO_NOT_DISRUPT } },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'k6',
              image: K6_IMAGE,
              // k6's REST API on the Pod's address (its default, localhost, is out of the Pod proxy's reach): the
              // calibration reads the live metrics from it (shared/calibration/k6Signal.ts).
              args: ['run', '--address', `0.0.0.0:${K6_REST.port}`, `${K6_SCRIPT.mountPath}/${K6_SCRIPT.key}`],
              ports: [{ name: K6_REST.portName, containerPort: K6_REST.port, protocol: 'TCP' }],
              env,
              volumeMounts: [{ name: 'script', mountPath: K6_SCRIPT.mountPath, readOnly: true }],
            },
          ],
          volumes: [{ name: 'script', configMap: { name: parts.scriptConfigMap } }],
        },
      },
    },
  };
  return job as KubeObject;
}
