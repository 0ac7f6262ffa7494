import type { IJob } from 'kubernetes-models/batch/v1/Job';
import * as z from 'zod';
import { K6_ENV, K6_IMAGE, K6_REST } from '../k6.js';
import type { KubeObject } from '../types.js';
import { K6_REQUEST_DEFAULTS, K6_SCRIPT } from './k6Script.js';
import { DEFAULT_K6_SCRIPT_CONFIGMAP } from './k6ScriptConfigMap.js';
import { DO_NOT_DISRUPT, MANAGED_BY } from './labels.js';
import { requestMixSchema } from '../../load/index.js';
import { dns1123Label, integer, requiredString, tolerationSchema } from './vllmInput.js';

/** Finished Jobs (and their Pods and logs) are kept this long for reading, then garbage-collected. */
export const K6_JOB_DEFAULTS = { ttlSecondsAfterFinished: 3600 } as const;

/** The label that says what a k6 Job does. */
export const K6_COMPONENT_LABEL = 'app.kubernetes.io/component';

const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/**
 * What k6 asks of its node by default: k6 keeps a JavaScript runtime per VU (a few MB each; the guide's 500 VUs at the
 * most) and parses every answer, so a starved k6 would slow the offered load and be mistaken for the replica. A CPU
 * request and no CPU limit (no throttling); a memory limit so a runaway run is killed rather than its node.
 */
export const K6_RESOURCE_DEFAULTS = {
  requests: { cpu: '1', memory: '1Gi' },
  limits: { memory: '2Gi' },
} as const;

/** A Kubernetes quantity (resource.Quantity's grammar): `500m`, `1`, `1.5`, `2Gi`, `512M`, `1e3`. */
const QUANTITY = /^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?$/;
/** A label key: an optional DNS-subdomain prefix and `/`, then a name of 1-63 alphanumerics, `-`, `_`, `.`. */
const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** A DNS-1123 subdomain (a Secret's name): lower-case alphanumerics, `-` and `.`, at most 253. */
const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const quantity = (what: string) =>
  z.string({ error: `must be a Kubernetes quantity such as "500m", "1" or "2Gi" (${what})` }).regex(QUANTITY, {
    error: (issue) =>
      `${JSON.stringify(issue.input)} is not a Kubernetes quantity; accepted: e.g. "500m", "1", "1.5", "2Gi", "512M" (${what})`,
  });
const resourceList = (what: string) =>
  z.strictObject({ cpu: quantity(`${what} cpu`).optional(), memory: quantity(`${what} memory`).optional() });

/**
 * Where and how the k6 Pod runs (docs/calibration.md, "k6 Jobs"): the image (a k6 with xk6-sse for streaming), its
 * resources, node selector, tolerations and image pull Secrets. The calibration input's `k6` holds the same fields.
 */
export const k6PodShape = {
  image: requiredString('the k6 image').default(K6_IMAGE),
  resources: z
    .strictObject({
      requests: resourceList('requests').default({ ...K6_RESOURCE_DEFAULTS.requests }),
      limits: resourceList('limits').default({ ...K6_RESOURCE_DEFAULTS.limits }),
    })
    .prefault({}),
  nodeSelector: z
    .record(
      z.string().regex(LABEL_KEY, {
        error: (issue) =>
          `${JSON.stringify(issue.input)} is not a label key; accepted: [prefix/]name, name 1-63 alphanumerics, "-", "_", "."`,
      }),
      z.string().regex(LABEL_VALUE, { error: 'is not a label value (up to 63 alphanumerics, "-", "_", ".")' }),
    )
    .default(() => ({})),
  tolerations: z.array(tolerationSchema).default(() => []),
  /** Names of Secrets (type kubernetes.io/dockerconfigjson) in the Jobs' namespace, for a private registry. */
  imagePullSecrets: z
    .array(
      z.string({ error: 'must be a Secret name' }).regex(DNS1123_SUBDOMAIN, {
        error: (issue) =>
          `${JSON.stringify(issue.input)} is not a Secret name; accepted: a DNS-1123 subdomain (lower-case letters, digits, "-", ".", at most 253)`,
      }),
    )
    .default(() => []),
};

export const k6PodSettingsSchema = z.strictObject(k6PodShape);
export type K6PodSettings = z.output<typeof k6PodSettingsSchema>;
export type K6PodSettingsSpec = z.input<typeof k6PodSettingsSchema>;

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
  /** Lengths drawn per request (shared/load); when set, promptTokens and maxTokens are not sent. */
  requestMix: requestMixSchema(Number.MAX_SAFE_INTEGER).optional(),
  /** Stream the answers and measure TTFT / inter-token latency (needs a k6 image with xk6-sse). */
  stream: z.boolean().default(false),
  /** Where and how the Pod runs. */
  pod: k6PodSettingsSchema.prefault({}),
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
  pod: K6PodSettings;
}

/** The request env of a Job input: a mix (JSON) replaces the fixed lengths; `stream` only when true. */
export function k6RequestEnv(input: {
  promptTokens?: number | undefined;
  maxTokens: number;
  requestMix?: z.output<ReturnType<typeof requestMixSchema>> | undefined;
  stream: boolean;
}): K6JobParts['env'] {
  return {
    ...(input.requestMix === undefined
      ? { promptTokens: input.promptTokens, maxTokens: input.maxTokens }
      : { requestMix: JSON.stringify(input.requestMix) }),
    ...(input.stream ? { stream: 'true' } : {}),
  };
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
          ...(Object.keys(parts.pod.nodeSelector).length > 0 ? { nodeSelector: parts.pod.nodeSelector } : {}),
          ...(parts.pod.tolerations.length > 0 ? { tolerations: parts.pod.tolerations } : {}),
          ...(parts.pod.imagePullSecrets.length > 0
            ? { imagePullSecrets: parts.pod.imagePullSecrets.map((name) => ({ name })) }
            : {}),
          containers: [
            {
              name: 'k6',
              image: parts.pod.image,
              resources: parts.pod.resources,
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
