/**
 * What several checks read about the target: its Deployment, Pod template, vLLM container and args, Ready Pods,
 * and the helpers that turn what they saw into evidence.
 */
import { argsOf, gpuCount, parseVllmArgs, type TemplateContainer, vllmContainer } from '../calibration/index.js';
import { KINDS, type KubeObject, type ObjectRef } from '../kube/index.js';
import { isRefusedAnswer } from '../metrics/index.js';
import { PreflightDeploymentNotFoundError, PreflightPodTemplateInvalidError } from './errors.js';
import type { Evidence, PreflightCheck, PreflightContext } from './types.js';

/** vLLM's defaults for the flags the checks read (vllm/engine/arg_utils.py). */
export const VLLM_ARG_DEFAULTS = { gpuMemoryUtilization: 0.9, port: 8000 } as const;
export const VLLM_ARGS = {
  gpuMemoryUtilization: '--gpu-memory-utilization',
  maxModelLen: '--max-model-len',
  servedModelName: '--served-model-name',
  model: '--model',
  port: '--port',
} as const;

export interface PodTemplate {
  annotations: Record<string, string>;
  labels: Record<string, string>;
  containers: TemplateContainer[];
  /** The template as found, for hashing. */
  raw: unknown;
}

/** The Deployment under check, as a reference for evidence. */
export function deploymentRef(context: PreflightContext): ObjectRef {
  return { ...KINDS.deployment, namespace: context.target.namespace, name: context.target.deployment };
}

/** The live Deployment; throws PreflightDeploymentNotFoundError when there is none. */
export async function loadDeployment(context: PreflightContext): Promise<KubeObject> {
  const deployment = await context.cluster.get(deploymentRef(context));
  if (deployment === undefined)
    throw new PreflightDeploymentNotFoundError(context.target.namespace, context.target.deployment);
  return deployment;
}

/** The Deployment's Pod template; throws PreflightPodTemplateInvalidError without containers. */
export function podTemplateOf(deployment: KubeObject): PodTemplate {
  const raw = (deployment.spec as { template?: unknown } | undefined)?.template;
  const template = (raw ?? {}) as {
    metadata?: { annotations?: Record<string, string>; labels?: Record<string, string> };
    spec?: { containers?: TemplateContainer[] };
  };
  const containers = template.spec?.containers ?? [];
  if (!Array.isArray(containers) || containers.length === 0)
    throw new PreflightPodTemplateInvalidError(deployment.metadata.name, 'spec.template.spec.containers is empty');
  return {
    annotations: template.metadata?.annotations ?? {},
    labels: template.metadata?.labels ?? {},
    containers,
    raw,
  };
}

/** The vLLM container of a template (shared/calibration/provenance.ts's rule: named `vllm`, else mentions vllm). */
export function vllmContainerOf(template: PodTemplate): TemplateContainer {
  return vllmContainer(template.containers);
}

export { argsOf, gpuCount, parseVllmArgs };

/** The model a vLLM container serves: `--served-model-name`, else `--model`, else `serve <model>`. */
export function servedModelOf(args: readonly string[]): string | undefined {
  const flags = parseVllmArgs(args);
  const positional = flags.get('_')?.split(' ');
  const serveIndex = positional?.indexOf('serve') ?? -1;
  const fromServe = serveIndex >= 0 ? positional?.[serveIndex + 1] : undefined;
  return flags.get(VLLM_ARGS.servedModelName) ?? flags.get(VLLM_ARGS.model) ?? fromServe;
}

/** The port the vLLM server listens on in the Pod: `--port`, else vLLM's default 8000. */
export function vllmPortOf(container: TemplateContainer): number {
  const port = Number(parseVllmArgs(argsOf(container)).get(VLLM_ARGS.port));
  return Number.isInteger(port) && port > 0 ? port : VLLM_ARG_DEFAULTS.port;
}

/** Evidence: an object that was (or was not) found. */
export function objectEvidence(ref: ObjectRef, found: boolean, detail?: Record<string, unknown>): Evidence {
  return { kind: 'object', ref, found, ...(detail === undefined ? {} : { detail }) };
}

/** Evidence: a query and how many series it returned. */
export function seriesEvidence(query: string, series: number, detail?: Record<string, unknown>): Evidence {
  return { kind: 'series', query, series, ...(detail === undefined ? {} : { detail }) };
}

/** What a check's run resolves to (runPreflight adds its id, item and title). */
export type CheckOutcome = Awaited<ReturnType<PreflightCheck['run']>>;

/** An AMP answer the guard let through, or the check's `fail` for one it refused. */
export type GuardedAnswer<T> = { ok: true; value: T } | { ok: false; outcome: CheckOutcome };

const REFUSED_ANSWER_FIX =
  'Query AMP for the series the reason names. Several series where one is expected come from two scrapes of one ' +
  'target (two ServiceMonitors, or a PodMonitor beside one) or Prometheus replicas remote-writing the same series; a ' +
  'value outside its domain or +/-Inf from the exporter or a relabelling. Fix the scrape configuration, then run ' +
  'preflight again';

/**
 * An AMP answer read through the shared answer guard (`read` calls shared/metrics' guard functions). An answer it
 * refuses (several series where one is expected, a value outside its metric's domain, ±Inf, a series without its
 * label) is the check's finding: `fail`, with the error's name and message and the query as evidence, never a number
 * the check goes on with. Any other error is thrown on (runPreflight: "could not check").
 */
export function guardedAnswer<T>(
  query: string,
  series: number,
  read: () => T,
  evidence: readonly Evidence[] = [],
): GuardedAnswer<T> {
  try {
    return { ok: true, value: read() };
  } catch (error) {
    if (!isRefusedAnswer(error)) throw error;
    return {
      ok: false,
      outcome: {
        status: 'fail',
        reason: `AMP's answer cannot be used: ${error.name}: ${error.message}`,
        evidence: [...evidence, seriesEvidence(query, series, { refused: error.name })],
        fix: REFUSED_ANSWER_FIX,
      },
    };
  }
}

/** Evidence: a setting and its value. */
export function settingEvidence(
  name: string,
  value: string | number | boolean | null,
  detail?: Record<string, unknown>,
): Evidence {
  return { kind: 'setting', name, value, ...(detail === undefined ? {} : { detail }) };
}

/** `a, b and c` */
export function listText(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1] ?? ''}`;
}

/** `1 Pod`, `2 Pods` */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * The sum of a metric's samples in a Prometheus text exposition (one Pod's /metrics), or undefined when the
 * metric is absent. Enough for counters and gauges; histograms are asked for by their `_count` name.
 */
export function sumOfMetric(exposition: string, metric: string): number | undefined {
  let total: number | undefined;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(metric)) continue;
    const rest = line.slice(metric.length);
    if (!(rest.startsWith('{') || rest.startsWith(' '))) continue;
    const valueText = rest.startsWith('{') ? rest.slice(rest.lastIndexOf('}') + 1).trim() : rest.trim();
    const value = Number(valueText.split(/\s+/)[0]);
    if (Number.isFinite(value)) total = (total ?? 0) + value;
  }
  return total;
}

/** The context's abort signal as an options object (absent when there is none). */
export function signalOf(context: PreflightContext): { signal?: AbortSignal } {
  return context.signal === undefined ? {} : { signal: context.signal };
}

/** A Pod as an evidence reference. */
export function podRef(pod: KubeObject): ObjectRef {
  return { ...KINDS.pod, namespace: pod.metadata.namespace ?? '', name: pod.metadata.name };
}

/** A Pod's /metrics read through the API server's Pod proxy, or the error that kept it from being read. */
export async function readPodMetrics(
  context: PreflightContext,
  pod: KubeObject,
  port: number,
): Promise<{ text: string } | { error: string }> {
  try {
    const text = await context.cluster.proxyGet(
      { namespace: context.target.namespace, pod: pod.metadata.name, port, path: '/metrics' },
      signalOf(context),
    );
    return { text };
  } catch (error) {
    return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}
