import { aggregate, domainOfMetric, guardByLabel, VLLM, vllmSelector } from '../../metrics/index.js';
import { deploymentPods, type KubeObject } from '../../kube/index.js';
import { CHECK_IDS, type Evidence, type PreflightCheck, type PreflightContext } from '../types.js';
import {
  deploymentRef,
  guardedAnswer,
  listText,
  loadDeployment,
  objectEvidence,
  plural,
  podRef,
  podTemplateOf,
  readPodMetrics,
  seriesEvidence,
  vllmContainerOf,
  vllmPortOf,
  signalOf,
} from '../workload.js';

/**
 * Item 1: every Ready Pod serves vLLM's metrics. A Pod whose series are in AMP passes; otherwise its /metrics is read
 * through the API server's Pod proxy. A Pod that exposes metrics nobody scrapes still passes here: scraping is
 * item 2's job, so one broken thing turns exactly one check.
 */
export const vllmMetricsExposed: PreflightCheck = {
  id: CHECK_IDS.vllmMetricsExposed,
  item: 1,
  title: 'vLLM /metrics endpoint exposed',
  async run(context) {
    const { target } = context;
    const deployment = await loadDeployment(context);
    const { ready } = await deploymentPods(context.cluster, deployment);
    const query = aggregate('max', ['pod'], vllmSelector(target, VLLM.numRequestsRunning));
    if (ready.length === 0) {
      return {
        status: 'fail',
        reason: `Deployment ${target.namespace}/${target.deployment} has no Ready Pods, so no vLLM /metrics endpoint serves`,
        evidence: [objectEvidence(deploymentRef(context), true, { readyPods: 0 })],
        fix: `Get the replicas Ready first: kubectl -n ${target.namespace} describe pods -l app=${target.deployment}`,
      };
    }
    const samples = await context.metrics.instant(query, { timeMs: context.clock.now(), ...signalOf(context) });
    // One series per Pod (max by (pod)), a count: two for one Pod, a negative count or ±Inf fails the check.
    const answer = guardedAnswer(query, samples.length, () =>
      guardByLabel(samples, 'pod', domainOfMetric(VLLM.numRequestsRunning), query),
    );
    if (!answer.ok) return answer.outcome;
    const inAmp = new Set(answer.value.keys());
    const evidence: Evidence[] = [seriesEvidence(query, samples.length, { pods: [...inAmp].sort() })];
    const port = vllmPortOf(vllmContainerOf(podTemplateOf(deployment)));
    const missing: string[] = [];
    let viaProxy = 0;
    for (const pod of ready) {
      const name = pod.metadata.name;
      if (inAmp.has(name)) continue;
      const exposed = await exposesVllmMetrics(context, pod, port);
      evidence.push(
        objectEvidence(podRef(pod), true, { proxyPath: `/metrics`, port, vllmMetrics: exposed.ok, ...exposed.detail }),
      );
      if (exposed.ok) viaProxy += 1;
      else missing.push(name);
    }
    if (missing.length > 0) {
      return {
        status: 'fail',
        reason: `${plural(missing.length, 'Ready Pod')} of ${ready.length} serve no vLLM metrics on /metrics (port ${port}): ${listText(missing)}`,
        evidence,
        fix: `Run the official vLLM OpenAI server (vllm serve / vllm.entrypoints.openai.api_server), which serves /metrics on its API port; check that --port matches the container port (kubectl -n ${target.namespace} port-forward pod/${missing[0] ?? ''} ${port} && curl localhost:${port}/metrics)`,
      };
    }
    const scraped = ready.length - viaProxy;
    return {
      status: 'pass',
      reason:
        viaProxy === 0
          ? `all ${plural(ready.length, 'Ready Pod')} have vLLM series in AMP (${VLLM.numRequestsRunning})`
          : `all ${plural(ready.length, 'Ready Pod')} serve vLLM metrics: ${scraped} seen in AMP, ${viaProxy} read on /metrics through the Pod proxy`,
      evidence,
    };
  },
};

/** Reads /metrics through the Pod proxy; the endpoint counts as vLLM's when it carries `vllm:` series. */
async function exposesVllmMetrics(
  context: PreflightContext,
  pod: KubeObject,
  port: number,
): Promise<{ ok: boolean; detail: Record<string, unknown> }> {
  const read = await readPodMetrics(context, pod, port);
  // An unreachable endpoint is this check's finding, not a failure to check.
  if ('error' in read) return { ok: false, detail: { error: read.error } };
  return { ok: read.text.includes(VLLM.numRequestsRunning), detail: { bytes: read.text.length } };
}
