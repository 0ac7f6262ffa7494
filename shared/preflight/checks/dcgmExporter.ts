import { deploymentPods, KINDS, type KubeObject, type ObjectRef } from '../../kube/index.js';
import { DCGM, DCGM_LABELS, dcgmSelector, domainOfMetric, guardSamples } from '../../metrics/index.js';
import { CHECK_IDS, type Evidence, type PreflightCheck } from '../types.js';
import {
  guardedAnswer,
  listText,
  loadDeployment,
  objectEvidence,
  plural,
  seriesEvidence,
  signalOf,
} from '../workload.js';

/** How NVIDIA's chart and the gpu-operator label the exporter, and the image they run. */
const DCGM_NAME_LABEL = { key: 'app.kubernetes.io/name', value: 'dcgm-exporter' } as const;
const DCGM_IMAGE = 'dcgm-exporter';

interface DaemonSetStatus {
  desiredNumberScheduled?: number;
  numberReady?: number;
}

/**
 * Item 3: a DCGM exporter DaemonSet (any namespace) has every scheduled Pod Ready (at least one), and AMP has
 * framebuffer series (DCGM_FI_DEV_FB_USED) for the GPU of every Ready vLLM Pod.
 */
export const dcgmExporter: PreflightCheck = {
  id: CHECK_IDS.dcgmExporter,
  item: 3,
  title: 'DCGM exporter DaemonSet running',
  async run(context) {
    const { target } = context;
    const all = await context.cluster.list({ ...KINDS.daemonSet });
    const exporters = all.filter(isDcgmExporter);
    const evidence: Evidence[] = [];
    if (exporters.length === 0) {
      evidence.push(
        objectEvidence({ ...KINDS.daemonSet, name: DCGM_IMAGE }, false, {
          daemonSetsSeen: all.length,
        }),
      );
      return {
        status: 'fail',
        reason: `no DCGM exporter DaemonSet in any namespace (none of ${plural(all.length, 'DaemonSet')} runs an image with "${DCGM_IMAGE}" or has ${DCGM_NAME_LABEL.key}=${DCGM_NAME_LABEL.value})`,
        evidence,
        fix: 'Install NVIDIA dcgm-exporter (the gpu-operator, or helm install dcgm-exporter gpu-helm-charts/dcgm-exporter) and a ServiceMonitor for it with honorLabels: true',
      };
    }
    const statuses = exporters.map((ds) => {
      const status = (ds.status ?? {}) as DaemonSetStatus;
      const desired = status.desiredNumberScheduled ?? 0;
      const ready = status.numberReady ?? 0;
      evidence.push(objectEvidence(refOf(ds), true, { desiredNumberScheduled: desired, numberReady: ready }));
      return { ds, desired, ready, healthy: ready >= 1 && ready === desired };
    });
    const healthy = statuses.find((s) => s.healthy);
    if (healthy === undefined) {
      const text = statuses.map(
        (s) => `${s.ds.metadata.namespace ?? ''}/${s.ds.metadata.name} ${s.ready}/${s.desired} Ready`,
      );
      return {
        status: 'fail',
        reason: `DCGM exporter DaemonSet not running on every GPU node: ${listText(text)}`,
        evidence,
        fix: `kubectl -n ${statuses[0]?.ds.metadata.namespace ?? 'gpu-operator'} describe daemonset ${statuses[0]?.ds.metadata.name ?? ''}: check its nodeSelector/tolerations match the GPU nodes and why its Pods are not Ready`,
      };
    }
    const dsName = `${healthy.ds.metadata.namespace ?? ''}/${healthy.ds.metadata.name}`;
    const deployment = await loadDeployment(context);
    const { ready } = await deploymentPods(context.cluster, deployment);
    const query = dcgmSelector(target, DCGM.fbUsed);
    const samples = await context.metrics.instant(query, { timeMs: context.clock.now(), ...signalOf(context) });
    // A series per GPU (framebuffer MiB used, >= 0): a negative value or ±Inf fails the check.
    const answer = guardedAnswer(
      query,
      samples.length,
      () => guardSamples(samples, domainOfMetric(DCGM.fbUsed), query),
      evidence,
    );
    if (!answer.ok) return answer.outcome;
    const gpusByPod = new Map<string, Set<string>>();
    for (const sample of answer.value) {
      const pod = sample.labels[DCGM_LABELS.pod];
      if (pod === undefined) continue;
      const gpus = gpusByPod.get(pod) ?? new Set<string>();
      gpus.add(sample.labels[DCGM_LABELS.uuid] ?? sample.labels.gpu ?? '?');
      gpusByPod.set(pod, gpus);
    }
    evidence.push(
      seriesEvidence(query, samples.length, {
        gpusByPod: Object.fromEntries([...gpusByPod].map(([pod, gpus]) => [pod, [...gpus].sort()])),
      }),
    );
    const uncovered = ready.map((p) => p.metadata.name).filter((pod) => !gpusByPod.has(pod));
    if (ready.length > 0 && uncovered.length > 0) {
      return {
        status: 'fail',
        reason: `DaemonSet ${dsName} is ${healthy.ready}/${healthy.desired} Ready, but AMP has no ${DCGM.fbUsed} series for the GPU of ${listText(uncovered)}`,
        evidence,
        fix: 'Scrape the exporter with a ServiceMonitor (honorLabels: true keeps its namespace/pod labels) and run it with DCGM_EXPORTER_KUBERNETES=true so each GPU carries the Pod it is allocated to',
      };
    }
    const gpus = [...gpusByPod.values()].reduce((n, set) => n + set.size, 0);
    return {
      status: 'pass',
      reason:
        ready.length === 0
          ? `DaemonSet ${dsName} is ${healthy.ready}/${healthy.desired} Ready (the Deployment has no Ready Pods whose GPUs to look for)`
          : `DaemonSet ${dsName} is ${healthy.ready}/${healthy.desired} Ready; AMP has ${DCGM.fbUsed} for ${plural(gpus, 'GPU')} of all ${plural(ready.length, 'Ready Pod')}`,
      evidence,
    };
  },
};

function isDcgmExporter(ds: KubeObject): boolean {
  if (ds.metadata.labels?.[DCGM_NAME_LABEL.key] === DCGM_NAME_LABEL.value) return true;
  const containers =
    (ds.spec as { template?: { spec?: { containers?: Array<{ image?: string }> } } } | undefined)?.template?.spec
      ?.containers ?? [];
  return containers.some((c) => (c.image ?? '').includes(DCGM_IMAGE));
}

function refOf(ds: KubeObject): ObjectRef {
  return { ...KINDS.daemonSet, namespace: ds.metadata.namespace ?? '', name: ds.metadata.name };
}
