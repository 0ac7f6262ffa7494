import {
  deploymentPods,
  KINDS,
  monitorSelects,
  monitorWatchesNamespace,
  servicesSelecting,
  type KubeObject,
  type ObjectRef,
  type ServiceMonitorSpec,
} from '../../kube/index.js';
import { guardSamples, VALUE_DOMAIN, VLLM, vllmSelector } from '../../metrics/index.js';
import { CHECK_IDS, type Evidence, type PreflightCheck, type PreflightContext } from '../types.js';
import {
  guardedAnswer,
  listText,
  loadDeployment,
  objectEvidence,
  plural,
  seriesEvidence,
  signalOf,
} from '../workload.js';

/** The Prometheus operator's CRD, as kube-prometheus-stack installs it. */
const SERVICE_MONITOR_CRD: ObjectRef = {
  ...KINDS.customResourceDefinition,
  name: 'servicemonitors.monitoring.coreos.com',
};

interface ServicePort {
  name?: string;
  port?: number;
  targetPort?: number | string;
}

/**
 * Item 2: a ServiceMonitor selects the vLLM Service on one of its ports, and AMP has a sample newer than
 * settings.freshnessSeconds for every Ready Pod (`timestamp()` of the newest sample of each).
 */
export const serviceMonitorScraping: PreflightCheck = {
  id: CHECK_IDS.serviceMonitorScraping,
  item: 2,
  title: 'ServiceMonitor → Prometheus scraping',
  async run(context) {
    const { target, settings } = context;
    const crd = await context.cluster.get(SERVICE_MONITOR_CRD);
    if (crd === undefined) {
      return {
        status: 'fail',
        reason: 'Prometheus operator not installed: no CustomResourceDefinition servicemonitors.monitoring.coreos.com',
        evidence: [objectEvidence(SERVICE_MONITOR_CRD, false)],
        fix: 'Install the Prometheus operator (helm install kube-prometheus-stack prometheus-community/kube-prometheus-stack -n monitoring), then apply the vLLM ServiceMonitor (vllm-pilot render servicemonitor | kubectl apply -f -)',
      };
    }
    const deployment = await loadDeployment(context);
    const service = await findService(context, deployment);
    const evidence: Evidence[] = [objectEvidence(SERVICE_MONITOR_CRD, true)];
    if (service.object === undefined) {
      evidence.push(objectEvidence(service.ref, false));
      return {
        status: 'fail',
        reason: `no Service ${service.ref.name === '*' ? 'selects the Pods of' : `${service.ref.name} found for`} Deployment ${target.namespace}/${target.deployment}, so no ServiceMonitor can select it`,
        evidence,
        fix: 'Apply the vLLM Service (vllm-pilot render service | kubectl apply -f -), or set the target\'s "service" to its name',
      };
    }
    const svc = service.object;
    const svcRef = refOf(svc);
    const svcLabels = svc.metadata.labels ?? {};
    const svcPorts = ((svc.spec as { ports?: ServicePort[] } | undefined)?.ports ?? []).map((p) => p.name ?? '');
    evidence.push(objectEvidence(svcRef, true, { labels: svcLabels, ports: svcPorts }));

    const monitors = await context.cluster.list({ ...KINDS.serviceMonitor });
    const candidates = monitors.filter((m) => monitorWatchesNamespace(m, target.namespace));
    const selecting = candidates.filter((m) => monitorSelects(m, svcLabels));
    const matching = selecting.filter((m) =>
      ((m.spec as ServiceMonitorSpec | undefined)?.endpoints ?? []).some(
        (e) => e.port !== undefined && svcPorts.includes(e.port),
      ),
    );
    if (matching.length === 0) {
      for (const m of selecting)
        evidence.push(objectEvidence(refOf(m), true, { selectsService: true, portMatches: false }));
      const why =
        selecting.length === 0
          ? `no ServiceMonitor (of ${plural(candidates.length, 'one')} watching namespace ${target.namespace}) selects Service ${svc.metadata.name} (labels ${JSON.stringify(svcLabels)})`
          : `ServiceMonitor ${listText(selecting.map((m) => m.metadata.name))} selects Service ${svc.metadata.name} but names none of its ports (${listText(svcPorts.map((p) => JSON.stringify(p)))})`;
      if (selecting.length === 0)
        evidence.push(objectEvidence({ ...KINDS.serviceMonitor, namespace: target.namespace, name: '*' }, false));
      return {
        status: 'fail',
        reason: why,
        evidence,
        fix: `Apply a ServiceMonitor whose selector.matchLabels match Service ${svc.metadata.name} and whose endpoints[].port is one of its port names (vllm-pilot render servicemonitor | kubectl apply -f -)`,
      };
    }
    const monitor = matching[0] as KubeObject;
    evidence.push(objectEvidence(refOf(monitor), true, { selectsService: true, portMatches: true }));

    const { ready } = await deploymentPods(context.cluster, deployment);
    if (ready.length === 0) {
      return {
        status: 'fail',
        reason: `ServiceMonitor ${monitor.metadata.name} selects Service ${svc.metadata.name}, but the Deployment has no Ready Pods to scrape`,
        evidence,
        fix: `Get the replicas Ready: kubectl -n ${target.namespace} get pods -l app=${target.deployment}`,
      };
    }
    const query = `timestamp(${vllmSelector(target, VLLM.numRequestsRunning)})`;
    const nowMs = context.clock.now();
    const samples = await context.metrics.instant(query, { timeMs: nowMs, ...signalOf(context) });
    // Sample times (Unix seconds), one series or several per Pod (the newest counts): a negative time or ±Inf fails.
    const answer = guardedAnswer(
      query,
      samples.length,
      () => guardSamples(samples, VALUE_DOMAIN.timestamp, query),
      evidence,
    );
    if (!answer.ok) return answer.outcome;
    const newest = new Map<string, number>();
    for (const sample of answer.value) {
      const pod = sample.labels.pod;
      if (pod === undefined || Number.isNaN(sample.value)) continue;
      newest.set(pod, Math.max(newest.get(pod) ?? 0, sample.value));
    }
    const ages = ready.map((pod) => {
      const at = newest.get(pod.metadata.name);
      return { pod: pod.metadata.name, ageSeconds: at === undefined ? undefined : Math.max(0, nowMs / 1000 - at) };
    });
    evidence.push(
      seriesEvidence(query, samples.length, {
        freshnessSeconds: settings.freshnessSeconds,
        ages: Object.fromEntries(
          ages.map((a) => [a.pod, a.ageSeconds === undefined ? null : Math.round(a.ageSeconds)]),
        ),
      }),
    );
    const unscraped = ages.filter((a) => a.ageSeconds === undefined).map((a) => a.pod);
    const stale = ages.filter((a) => a.ageSeconds !== undefined && a.ageSeconds > settings.freshnessSeconds);
    if (unscraped.length > 0 || stale.length > 0) {
      const parts = [
        ...(unscraped.length > 0 ? [`no samples in AMP for ${listText(unscraped)}`] : []),
        ...(stale.length > 0
          ? [`stale samples for ${listText(stale.map((a) => `${a.pod} (${Math.round(a.ageSeconds ?? 0)} s old)`))}`]
          : []),
      ];
      return {
        status: 'fail',
        reason: `ServiceMonitor ${monitor.metadata.name} selects Service ${svc.metadata.name}, but ${parts.join('; ')} (fresh means under ${settings.freshnessSeconds} s)`,
        evidence,
        fix: 'Check that Prometheus selects this ServiceMonitor (its serviceMonitorSelector labels, e.g. release: kube-prometheus-stack) and that remote_write to AMP works (Prometheus targets page, prometheus_remote_storage_samples_failed_total)',
      };
    }
    const oldest = Math.max(...ages.map((a) => a.ageSeconds ?? 0));
    return {
      status: 'pass',
      reason: `ServiceMonitor ${monitor.metadata.name} selects Service ${svc.metadata.name}; AMP has fresh samples for all ${plural(ready.length, 'Ready Pod')} (oldest ${Math.round(oldest)} s, limit ${settings.freshnessSeconds} s)`,
      evidence,
    };
  },
};

function refOf(object: KubeObject): ObjectRef {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name,
    ...(object.metadata.namespace === undefined ? {} : { namespace: object.metadata.namespace }),
  };
}

/**
 * The vLLM Service: the target's `service` when set, else one named after the Deployment, else a Service in the
 * namespace whose selector selects the Deployment's Pod labels (the product names it `<name>-svc`).
 */
async function findService(
  context: PreflightContext,
  deployment: KubeObject,
): Promise<{ ref: ObjectRef; object?: KubeObject }> {
  const { target } = context;
  const base = { ...KINDS.service, namespace: target.namespace };
  if (target.service !== undefined) {
    const ref = { ...base, name: target.service };
    const object = await context.cluster.get(ref);
    return object === undefined ? { ref } : { ref, object };
  }
  const byName = await context.cluster.get({ ...base, name: target.deployment });
  if (byName !== undefined) return { ref: { ...base, name: target.deployment }, object: byName };
  const [selecting] = await servicesSelecting(context.cluster, deployment);
  return selecting === undefined
    ? { ref: { ...base, name: '*' } }
    : { ref: { ...base, name: selecting.metadata.name }, object: selecting };
}
