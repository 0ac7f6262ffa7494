import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import * as z from 'zod';
import { REGION, type Target, TARGET_NAME_RULES } from '../config/index.js';
import { aggregate, assertDuration, VLLM, vllmHistogramQuantile, vllmSelector } from '../metrics/index.js';
import type { KubeObject } from '../kube/index.js';
import { DEFAULT_TRIGGER_AUTHENTICATION_NAME } from './triggerAuthenticationManifest.js';
import {
  dns1123Label,
  integer,
  parseInput,
  requiredString,
  VLLM_DEFAULTS,
  vllmObjectLabels,
} from '../kube/manifests/index.js';

/**
 * The EKS guide's ScaledObject ("Autoscale AI inference with HPA and KEDA"): bounds, HPA behavior and thresholds.
 * The thresholds come from the guide's load test (queue > 25 per pod, p95 > 5 s); the calibration replaces them
 * with measured ones.
 */
export const GUIDE_SCALING = {
  minReplicaCount: 1,
  maxReplicaCount: 5,
  queueThreshold: 25,
  queueActivationThreshold: 1,
  latencyThresholdSeconds: 5,
  latencyQuantile: 0.95,
  rateWindow: '1m',
  /** Scale up fast (users are already waiting): 30 s window, at most 2 Pods a minute. */
  scaleUp: { stabilizationWindowSeconds: 30, pods: 2, periodSeconds: 60, selectPolicy: 'Max' },
  /** Scale down slowly (GPU Pods take minutes to start): 5 min window, 1 Pod every 2 minutes. */
  scaleDown: { stabilizationWindowSeconds: 300, pods: 1, periodSeconds: 120, selectPolicy: 'Min' },
} as const;

/**
 * How the HPA reads each trigger (the trigger's `metricType`). The queue is a demand that adds up over Pods, so the
 * guide's `AverageValue` is right: desired = ceil(total waiting / threshold per Pod). A latency does not add up over
 * Pods: under `AverageValue` the HPA divides the p95 by the threshold as if it were a total, so desired =
 * ceil(p95 / threshold) however many Pods already run (a 10 s p95 against 5 s asks for 2 Pods, at 2 or at 8), and the
 * guardrail never scales past p95/threshold Pods. Under `Value` the HPA compares the p95 with the threshold as a whole
 * and scales the ready Pods: desired = ceil(ready Pods × p95 / threshold), as for any utilization-like metric
 * (Kubernetes pkg/controller/podautoscaler/replica_calculator.go, GetExternalMetricReplicas).
 */
export const TRIGGER_METRIC_TYPES = { queueDepth: 'AverageValue', p95Latency: 'Value' } as const;

/** The metric types a trigger may have (KEDA's; `AverageValue` when left out). */
export const METRIC_TYPES = ['AverageValue', 'Value'] as const;
export type MetricType = (typeof METRIC_TYPES)[number];

/**
 * Positions of the triggers in the ScaledObject this generator writes. A ScaledObject the calibration adopts may
 * order them differently: code that patches thresholds finds them by query (shared/calibration/scaledObjectThresholds).
 */
export const SCALED_OBJECT_TRIGGERS = { queueDepth: 0, p95Latency: 1 } as const;

/**
 * Overrides of one direction of the HPA behavior, field by field over the guide's. Bounds are the API server's
 * (k8s.io/kubernetes pkg/apis/autoscaling/validation: stabilizationWindowSeconds 0-3600, periodSeconds 1-1800,
 * a Pods policy value > 0; selectPolicy Max, Min or Disabled).
 */
const directionOverrideSchema = z.strictObject({
  stabilizationWindowSeconds: integer(0, 3600).optional(),
  pods: integer(1).optional(),
  periodSeconds: integer(1, 1800).optional(),
  selectPolicy: z
    .enum(['Max', 'Min', 'Disabled'], {
      error: (issue) => `${JSON.stringify(issue.input)} is not a select policy; accepted: Max, Min, Disabled`,
    })
    .optional(),
});

export type ScalingDirectionOverride = z.input<typeof directionOverrideSchema>;

function threshold(what: string, min: 'positive' | 'nonnegative') {
  const accepted = min === 'positive' ? 'a number > 0' : 'a number >= 0';
  const schema = z.number({ error: `must be a number (${what}); accepted: ${accepted}` });
  return min === 'positive'
    ? schema.gt(0, { error: `must be > 0 (${what})` })
    : schema.min(0, { error: `must be >= 0 (${what})` });
}

export const scaledObjectInputSchema = z
  .strictObject({
    /** The Deployment to scale; the ScaledObject and its HPA get the same name (as in the guide). */
    name: dns1123Label('the Deployment name').default(VLLM_DEFAULTS.name),
    namespace: dns1123Label('the namespace').default(VLLM_DEFAULTS.namespace),
    /** The served model name: the `model_name` label the queries match. */
    model: requiredString('the served model name, the model_name label of the vLLM series'),
    /**
     * Where KEDA sends its queries: the AMP workspace URL `https://aps-workspaces.<region>.amazonaws.com/workspaces/
     * <id>` (KEDA appends `/api/v1/query`; a pasted query URL is trimmed), or a plain Prometheus URL.
     */
    ampWorkspaceUrl: requiredString('the AMP workspace URL').transform((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(value)} is not a URL; accepted: https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>`,
        });
        return z.NEVER;
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} is not an http(s) URL` });
        return z.NEVER;
      }
      return value.replace(/\/+$/, '').replace(/\/api\/v1\/query$/, '');
    }),
    /** The region KEDA signs its AMP queries for (`metadata.awsRegion`); required unless `authentication` is false. */
    region: z
      .string({ error: 'must be a string' })
      .regex(REGION, {
        error: (issue) => `${JSON.stringify(issue.input)} is not an AWS region; accepted: e.g. "us-east-2"`,
      })
      .optional(),
    triggerAuthenticationName: dns1123Label('the TriggerAuthentication name').default(
      DEFAULT_TRIGGER_AUTHENTICATION_NAME,
    ),
    minReplicaCount: integer(0).default(GUIDE_SCALING.minReplicaCount),
    maxReplicaCount: integer(1).default(GUIDE_SCALING.maxReplicaCount),
    queueThreshold: threshold('waiting requests per replica', 'positive').default(GUIDE_SCALING.queueThreshold),
    queueActivationThreshold: threshold('waiting requests that activate scaling', 'nonnegative').default(
      GUIDE_SCALING.queueActivationThreshold,
    ),
    latencyThresholdSeconds: threshold('p95 end-to-end latency in seconds', 'positive').default(
      GUIDE_SCALING.latencyThresholdSeconds,
    ),
    /**
     * The latency trigger's metricType: `Value` (default, see TRIGGER_METRIC_TYPES), or the guide's `AverageValue` to
     * render the guide's form (for comparison; it stops scaling at ceil(p95 / threshold) Pods).
     */
    latencyMetricType: z
      .enum(METRIC_TYPES, {
        error: (issue) => `${JSON.stringify(issue.input)} is not a metric type; accepted: ${METRIC_TYPES.join(', ')}`,
      })
      .default(TRIGGER_METRIC_TYPES.p95Latency),
    rateWindow: z
      .string()
      .default(GUIDE_SCALING.rateWindow)
      .refine(
        (window) => {
          try {
            assertDuration(window);
            return true;
          } catch {
            return false;
          }
        },
        { error: 'is not a PromQL duration; accepted: e.g. "1m", "90s"' },
      ),
    /** For an AMP workspace shared by clusters: the label that names the cluster, and this cluster's value. */
    clusterLabel: z
      .string()
      .regex(TARGET_NAME_RULES.prometheusLabel.pattern, {
        error: `is not valid; accepted: ${TARGET_NAME_RULES.prometheusLabel.accepted}`,
      })
      .optional(),
    cluster: z.string().min(1).optional(),
    /** KEDA's polling interval in seconds (KEDA's default 30 when left out). */
    pollingInterval: integer(1).optional(),
    /** Seconds after the last active trigger before KEDA scales to zero (KEDA's default 300 when left out). */
    cooldownPeriod: integer(0).optional(),
    /** Overrides of the guide's HPA behavior (scale up fast, scale down slowly), field by field. */
    behavior: z
      .strictObject({ scaleUp: directionOverrideSchema.optional(), scaleDown: directionOverrideSchema.optional() })
      .optional(),
    /**
     * true (default): the triggers sign their queries through the TriggerAuthentication and `awsRegion` (AMP).
     * false: a Prometheus that needs no authentication (in-cluster, the twin's): no `authenticationRef`, no
     * `awsRegion` (KEDA would otherwise try to SigV4-sign for it), and `region` is not needed.
     */
    authentication: z.boolean({ error: 'must be true or false' }).default(true),
  })
  .superRefine((input, ctx) => {
    if (input.maxReplicaCount < input.minReplicaCount)
      ctx.addIssue({
        code: 'custom',
        path: ['maxReplicaCount'],
        message: `must be >= minReplicaCount (${input.minReplicaCount})`,
      });
    if (input.authentication && input.region === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['region'],
        message:
          'is required (the AWS region of the AMP workspace; set authentication: false for a Prometheus without auth)',
      });
    if ((input.clusterLabel === undefined) !== (input.cluster === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [input.cluster === undefined ? 'cluster' : 'clusterLabel'],
        message: 'cluster and clusterLabel go together: set both or neither',
      });
  });

export type ScaledObjectInputSpec = z.input<typeof scaledObjectInputSchema>;
export type ScaledObjectInput = z.output<typeof scaledObjectInputSchema>;

/**
 * The two trigger queries, scoped to one deployment. The guide's `sum(vllm:num_requests_waiting)` adds up every
 * vLLM series the Prometheus holds; against an AMP workspace that several deployments or clusters write to, one
 * model's queue would scale another model's Deployment. Here each series must carry the Deployment's namespace,
 * its `model_name` and a Pod name of the Deployment (and the cluster, when labelled), with every value escaped
 * (shared/metrics/promql.ts). The latency query also drops NaN (an idle window's quantile) so it reads 0, not NaN.
 */
export function scaledObjectQueries(
  input: Pick<ScaledObjectInput, 'name' | 'namespace' | 'model' | 'rateWindow' | 'cluster' | 'clusterLabel'>,
): {
  queueDepth: string;
  p95Latency: string;
} {
  const target: Target = {
    name: input.name,
    cluster: input.cluster ?? '',
    namespace: input.namespace,
    deployment: input.name,
    model: input.model,
    ...(input.clusterLabel === undefined ? {} : { clusterLabel: input.clusterLabel }),
  };
  // `or vector(0)` (the guide's): an absent series reads 0 instead of an empty answer.
  return {
    queueDepth: `${aggregate('sum', [], vllmSelector(target, VLLM.numRequestsWaiting))} or vector(0)`,
    p95Latency: `${vllmHistogramQuantile(target, GUIDE_SCALING.latencyQuantile, VLLM.e2eRequestLatency, input.rateWindow)} or vector(0)`,
  };
}

/**
 * The KEDA ScaledObject for a vLLM Deployment. With default input it is the guide's, field by field, except that
 * KEDA queries AMP (serverAddress, `awsRegion`, and `authenticationRef` to the TriggerAuthentication that signs) and
 * that the queries are scoped to the Deployment (see `scaledObjectQueries`). Optional inputs set the polling
 * interval, the cooldown, the activation threshold, HPA behavior overrides, and `authentication: false` for a
 * Prometheus that needs no signing.
 */
export function scaledObject(spec: ScaledObjectInputSpec): KubeObject {
  const input = parseInput(scaledObjectInputSchema, spec, 'scaledobject');
  const queries = scaledObjectQueries(input);
  const common = {
    serverAddress: input.ampWorkspaceUrl,
    ...(input.authentication && input.region !== undefined ? { awsRegion: input.region } : {}),
  };
  const auth = input.authentication ? { authenticationRef: { name: input.triggerAuthenticationName } } : {};
  const scaleUp = { ...GUIDE_SCALING.scaleUp, ...definedFields(input.behavior?.scaleUp) };
  const scaleDown = { ...GUIDE_SCALING.scaleDown, ...definedFields(input.behavior?.scaleDown) };
  const object: IScaledObject = {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name: input.name, namespace: input.namespace, labels: vllmObjectLabels(input.name) },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: input.name },
      ...(input.pollingInterval === undefined ? {} : { pollingInterval: input.pollingInterval }),
      ...(input.cooldownPeriod === undefined ? {} : { cooldownPeriod: input.cooldownPeriod }),
      minReplicaCount: input.minReplicaCount,
      maxReplicaCount: input.maxReplicaCount,
      advanced: {
        horizontalPodAutoscalerConfig: {
          name: input.name,
          behavior: {
            scaleUp: {
              stabilizationWindowSeconds: scaleUp.stabilizationWindowSeconds,
              policies: [{ type: 'Pods', value: scaleUp.pods, periodSeconds: scaleUp.periodSeconds }],
              selectPolicy: scaleUp.selectPolicy,
            },
            scaleDown: {
              stabilizationWindowSeconds: scaleDown.stabilizationWindowSeconds,
              policies: [{ type: 'Pods', value: scaleDown.pods, periodSeconds: scaleDown.periodSeconds }],
              selectPolicy: scaleDown.selectPolicy,
            },
          },
        },
      },
      triggers: [
        // Primary: queue depth, the demand signal.
        {
          type: 'prometheus',
          metricType: TRIGGER_METRIC_TYPES.queueDepth,
          ...auth,
          metadata: {
            ...common,
            query: queries.queueDepth,
            threshold: formatThreshold(input.queueThreshold),
            activationThreshold: formatThreshold(input.queueActivationThreshold),
          },
        },
        // SLO guardrail: p95 end-to-end latency in seconds, compared as a whole (TRIGGER_METRIC_TYPES).
        {
          type: 'prometheus',
          metricType: input.latencyMetricType,
          ...auth,
          metadata: { ...common, query: queries.p95Latency, threshold: formatThreshold(input.latencyThresholdSeconds) },
        },
      ],
    },
  };
  return object as KubeObject;
}

/** The fields that are set (an explicit `undefined` must not erase the guide's value). */
function definedFields<T extends object>(value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

/** KEDA reads thresholds as strings (strconv.ParseFloat): `25`, `2.5`. */
export function formatThreshold(value: number): string {
  return String(value);
}
