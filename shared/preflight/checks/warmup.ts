import { WARMUP_ANNOTATION, WARMUP_DONE_FILE } from '../../kube/manifests/index.js';
import { deploymentPods, type KubeObject } from '../../kube/index.js';
import { aggregate, domainOfMetric, guardByLabel, VLLM, vllmSelector } from '../../metrics/index.js';
import { CHECK_IDS, type Evidence, type PreflightCheck, type PreflightContext } from '../types.js';
import {
  deploymentRef,
  guardedAnswer,
  type GuardedAnswer,
  listText,
  loadDeployment,
  objectEvidence,
  plural,
  podRef,
  podTemplateOf,
  readPodMetrics,
  seriesEvidence,
  signalOf,
  sumOfMetric,
  vllmContainerOf,
  vllmPortOf,
  type PodTemplate,
} from '../workload.js';

interface ProbeShape {
  exec?: { command?: string[] };
}
interface LifecycleShape {
  postStart?: { exec?: { command?: string[] } };
}

/** How the template automates warmup, or undefined when it does not. */
function warmupAutomation(template: PodTemplate): string | undefined {
  const container = vllmContainerOf(template) as { readinessProbe?: ProbeShape; lifecycle?: LifecycleShape };
  const readiness = (container.readinessProbe?.exec?.command ?? []).join(' ');
  const postStart = (container.lifecycle?.postStart?.exec?.command ?? []).join(' ');
  const annotation = template.annotations[WARMUP_ANNOTATION];
  // The product's manifest: the annotation, a postStart hook that warms up, and readiness gated on its marker file.
  if (annotation !== undefined && postStart !== '' && readiness.includes(WARMUP_DONE_FILE))
    return `annotation ${WARMUP_ANNOTATION}: "${annotation}", a postStart warmup hook and an exec readinessProbe on ${WARMUP_DONE_FILE}`;
  // Another team's way: any exec readiness gate whose command mentions warmup.
  if (/warm/i.test(readiness)) return `an exec readinessProbe that waits for warmup (${readiness.slice(0, 80)})`;
  return undefined;
}

/**
 * Item 9: warmup is automated (the first requests after start are several times slower; the guide: 100 requests
 * before the health check) and every Ready Pod has served at least settings.warmupRequests requests
 * (vllm:request_success_total, from AMP, else the Pod's /metrics through the proxy), the trace warmup leaves.
 */
export const warmup: PreflightCheck = {
  id: CHECK_IDS.warmup,
  item: 9,
  title: 'Warmup automated after deployment',
  async run(context) {
    const { target, settings } = context;
    const deployment = await loadDeployment(context);
    const template = podTemplateOf(deployment);
    const automation = warmupAutomation(template);
    const evidence: Evidence[] = [
      objectEvidence(deploymentRef(context), true, { warmupAutomation: automation ?? null }),
    ];
    const fix = `Enable warmup in the Deployment (vllm-pilot render deployment sets ${WARMUP_ANNOTATION}, a postStart hook sending ${settings.warmupRequests} requests and a readinessProbe on ${WARMUP_DONE_FILE})`;
    if (automation === undefined) {
      return {
        status: 'warn',
        reason: `the Pod template does not automate warmup (no ${WARMUP_ANNOTATION} with a postStart hook, no readiness gate that waits for warmup): new replicas take traffic while slow`,
        evidence,
        fix,
      };
    }
    const { ready } = await deploymentPods(context.cluster, deployment);
    if (ready.length === 0) {
      return {
        status: 'warn',
        reason: `warmup is automated (${automation}), but no Pod is Ready to show it ran`,
        evidence,
        fix: `kubectl -n ${target.namespace} get pods -l app=${target.deployment}`,
      };
    }
    const read = await requestsServed(context, ready, vllmPortOf(vllmContainerOf(template)), evidence);
    if (!read.ok) return read.outcome;
    const served = read.value;
    const short = ready
      .map((pod) => ({ pod: pod.metadata.name, count: served.get(pod.metadata.name) }))
      .filter((p) => p.count === undefined || p.count < settings.warmupRequests);
    if (short.length > 0) {
      return {
        status: 'warn',
        reason: `warmup is automated, but ${plural(short.length, 'Ready Pod')} served fewer than ${settings.warmupRequests} requests: ${listText(short.map((p) => `${p.pod} (${p.count === undefined ? 'unknown' : Math.round(p.count)})`))}`,
        evidence,
        fix,
      };
    }
    const least = Math.min(...ready.map((pod) => served.get(pod.metadata.name) ?? 0));
    return {
      status: 'pass',
      reason: `warmup is automated (${automation}); all ${plural(ready.length, 'Ready Pod')} served at least ${settings.warmupRequests} requests (fewest ${Math.round(least)})`,
      evidence,
    };
  },
};

/**
 * Requests each Pod has completed: AMP first, the Pod's own /metrics for Pods AMP does not have. AMP's answer (one
 * count per Pod) passes the shared answer guard: two series for one Pod, a negative count or ±Inf is the check's fail.
 */
async function requestsServed(
  context: PreflightContext,
  ready: KubeObject[],
  port: number,
  evidence: Evidence[],
): Promise<GuardedAnswer<Map<string, number>>> {
  const query = aggregate('sum', ['pod'], vllmSelector(context.target, VLLM.requestSuccess));
  const samples = await context.metrics.instant(query, { timeMs: context.clock.now(), ...signalOf(context) });
  const answer = guardedAnswer(
    query,
    samples.length,
    () => guardByLabel(samples, 'pod', domainOfMetric(VLLM.requestSuccess), query),
    evidence,
  );
  if (!answer.ok) return answer;
  const served = answer.value;
  evidence.push(seriesEvidence(query, samples.length, { served: Object.fromEntries(served) }));
  for (const pod of ready) {
    if (served.has(pod.metadata.name)) continue;
    const read = await readPodMetrics(context, pod, port);
    const count = 'text' in read ? sumOfMetric(read.text, VLLM.requestSuccess) : undefined;
    evidence.push(
      objectEvidence(podRef(pod), true, {
        proxyPath: '/metrics',
        requestsServed: count ?? null,
        ...('error' in read ? { error: read.error } : {}),
      }),
    );
    if (count !== undefined) served.set(pod.metadata.name, count);
  }
  return { ok: true, value: served };
}
