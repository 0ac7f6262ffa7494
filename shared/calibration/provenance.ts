/**
 * Where a calibration comes from: the run, the Deployment's vLLM container (image, args), the GPU it asked for, and
 * a hash of its Pod template, so a later check can tell whether the result still describes the running spec.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import type { KubeObject } from '../kube/index.js';
import { CalibrationTargetNotFoundError } from './errors.js';
import { isFixed, meanLengths } from '../load/index.js';
import { requestMixOf, type CalibrationInput } from './input.js';
import type { Provenance } from './types.js';

/** The GPU resource the NVIDIA device plugin advertises. */
const GPU_RESOURCE = 'nvidia.com/gpu';

/** Node labels that name the GPU or the instance, most specific first (GPU feature discovery, Karpenter, Kubernetes). */
const GPU_LABELS = ['nvidia.com/gpu.product', 'karpenter.k8s.aws/instance-gpu-name'] as const;
const INSTANCE_LABELS = ['node.kubernetes.io/instance-type', 'beta.kubernetes.io/instance-type'] as const;

const stringMap = z.record(z.string(), z.string());
const containerSchema = z.looseObject({
  name: z.string(),
  image: z.string().optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  resources: z.looseObject({ limits: stringMap.optional(), requests: stringMap.optional() }).optional(),
});
const matchExpression = z.looseObject({
  key: z.string(),
  operator: z.string(),
  values: z.array(z.string()).optional(),
});
const podTemplateSchema = z.looseObject({
  spec: z.looseObject({
    containers: z.array(containerSchema).min(1),
    nodeSelector: stringMap.optional(),
    affinity: z
      .looseObject({
        nodeAffinity: z
          .looseObject({
            requiredDuringSchedulingIgnoredDuringExecution: z
              .looseObject({
                nodeSelectorTerms: z.array(z.looseObject({ matchExpressions: z.array(matchExpression).optional() })),
              })
              .optional(),
          })
          .optional(),
      })
      .optional(),
  }),
});
/** A container of a Pod template, as provenance and preflight read it. */
export type TemplateContainer = z.infer<typeof containerSchema>;
type Container = TemplateContainer;

export interface ProvenanceParams {
  executionId: string;
  executionName: string;
  /** ISO times of the run. */
  startedAt: string;
  finishedAt: string;
  input: CalibrationInput;
  /** The live Deployment that was calibrated. */
  deployment: KubeObject;
  /** The strategy name. */
  strategy: string;
  /** A Node the measured Pod ran on: its labels name the GPU when the Pod template does not. */
  node?: KubeObject;
  /** deploy.mode shadow: the copy the load went to (`deployment` is then the production one it copies). */
  measuredOn?: string;
}

/** Builds the provenance of a calibration from the run and the live Deployment. */
export function buildProvenance(params: ProvenanceParams): Provenance {
  const { input, deployment } = params;
  const where = `Deployment ${input.target.namespace}/${input.target.deployment}`;
  const template = (deployment.spec as { template?: unknown } | undefined)?.template;
  const parsed = podTemplateSchema.safeParse(template);
  if (!parsed.success) {
    throw new CalibrationTargetNotFoundError(
      `${where} has no usable Pod template (spec.template.spec.containers): ` +
        parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '),
    );
  }
  const podSpec = parsed.data.spec;
  const container = vllmContainer(podSpec.containers);
  return {
    executionId: params.executionId,
    executionName: params.executionName,
    startedAt: params.startedAt,
    finishedAt: params.finishedAt,
    cluster: input.target.cluster,
    namespace: input.target.namespace,
    deployment: input.target.deployment,
    model: input.target.model,
    image: container.image ?? '',
    gpu: describeGpu(container, schedulingLabels(podSpec), nodeLabels(params.node)),
    vllmArgs: [...(container.args ?? container.command ?? [])],
    podTemplateHash: podTemplateHash(template),
    strategy: params.strategy,
    ...requestProvenance(input),
    ...(params.measuredOn === undefined ? {} : { measuredOn: params.measuredOn }),
  };
}

/** A stable hash of a Pod template: sha256 of its JSON with keys sorted at every level, first 16 hex digits. */
export function podTemplateHash(template: unknown): string {
  return createHash('sha256').update(canonicalJson(template)).digest('hex').slice(0, 16);
}

/** JSON with object keys sorted, so the same object always serialises the same way whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The vLLM container: named `vllm`, else one whose image or command mentions vllm, else the one with a GPU. */
export function vllmContainer(containers: readonly Container[]): Container {
  const mentionsVllm = (c: Container) =>
    [c.image ?? '', ...(c.command ?? []), ...(c.args ?? [])].some((text) => /vllm/i.test(text));
  const wantsGpu = (c: Container) => gpuCount(c) !== undefined;
  return (
    containers.find((c) => c.name === 'vllm') ??
    containers.find(mentionsVllm) ??
    containers.find(wantsGpu) ??
    (containers[0] as Container)
  );
}

/** The container's `nvidia.com/gpu` limit (else request), as written; undefined when it asks for none. */
export function gpuCount(container: Container): string | undefined {
  return container.resources?.limits?.[GPU_RESOURCE] ?? container.resources?.requests?.[GPU_RESOURCE];
}

/** Labels the Pod template pins: its nodeSelector, and required node-affinity terms `key In [one value]`. */
function schedulingLabels(spec: z.infer<typeof podTemplateSchema>['spec']): Record<string, string> {
  const labels: Record<string, string> = {};
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    for (const expr of term.matchExpressions ?? []) {
      const only = expr.values?.length === 1 ? expr.values[0] : undefined;
      if (expr.operator === 'In' && only !== undefined) labels[expr.key] = only;
    }
  }
  return { ...labels, ...(spec.nodeSelector ?? {}) };
}

function nodeLabels(node: KubeObject | undefined): Record<string, string> {
  return node?.metadata.labels ?? {};
}

/** `1 × NVIDIA-L40S (g6e.4xlarge)`, from what the template pins, else the Node's labels; null when nothing says. */
function describeGpu(
  container: Container,
  pinned: Record<string, string>,
  node: Record<string, string>,
): string | null {
  const pick = (keys: readonly string[]) =>
    keys.map((k) => pinned[k]).find((v) => v !== undefined) ?? keys.map((k) => node[k]).find((v) => v !== undefined);
  const product = pick(GPU_LABELS);
  const instance = pick(INSTANCE_LABELS);
  const count = gpuCount(container);
  if (product === undefined && instance === undefined && count === undefined) return null;
  const gpu = product ?? GPU_RESOURCE;
  const head = count === undefined ? gpu : `${count} × ${gpu}`;
  if (product === undefined && count === undefined) return instance ?? null;
  return instance === undefined ? head : `${head} (${instance})`;
}

/**
 * The request shape: the lengths when fixed, else their expected values (rounded) with the mix itself, so a reader
 * (whatif, the report) sees both what a typical request was and how the lengths varied.
 */
function requestProvenance(input: CalibrationInput): Pick<Provenance, 'requestShape' | 'requestMix' | 'stream'> {
  const mix = requestMixOf(input.request);
  const means = meanLengths(mix);
  const fixed = isFixed(mix.prompt) && isFixed(mix.output);
  return {
    requestShape: { promptTokens: Math.round(means.promptTokens), maxTokens: Math.round(means.maxTokens) },
    ...(fixed ? {} : { requestMix: mix }),
    ...(input.request.stream ? { stream: true } : {}),
  };
}
