import {
  KINDS,
  KubeNotFoundError,
  podTemplateLabels,
  PROPAGATION_POLICIES,
  selectorSelects,
  type ClusterClient,
  type KubeObject,
} from '../../kube/index.js';
import { CalibrationShadowExposedError, CalibrationShadowNoGpuError } from '../errors.js';
import { shadowDeploymentName } from '../measuredDeployment.js';
import { EXECUTION_LABEL } from './names.js';

/**
 * deploy.mode `shadow` (docs/adr/0017-shadow-calibration-by-default.md): the calibration runs on a copy of the
 * production Deployment (the same Pod template under labels of its own, so no production Service selects its Pods),
 * with a Service and a ServiceMonitor of its own, and removes all three at its cleanup. Production's Pods, replicas,
 * ScaledObject and alerts are not touched; the copy's Pods are named `<deployment>-shadow-...`, which the target's
 * Pod matcher (`<deployment>-<hash>-<suffix>`, shared/metrics/promql.ts) never matches, so production's metrics,
 * alerts and KEDA triggers never see the test's saturation, and the calibration's queries see only the copy.
 */

/** On the copy's Deployment, Service, ServiceMonitor and Pods: the production Deployment it copies. */
export const SHADOW_LABEL = 'vllm-eks-pilot/shadow-of';

/** Whether a live Deployment is a calibration's copy (the cleanup deletes it rather than restoring it). */
export function isShadow(deployment: KubeObject | undefined): boolean {
  return deployment?.metadata.labels?.[SHADOW_LABEL] !== undefined;
}

/** What the copy is made from. */
export interface ShadowSource {
  production: KubeObject;
  /** The production Service in front of the Pods (serviceUrlFor's choice): the copy's Service takes its ports. */
  service: KubeObject;
  executionLabel: string;
  replicas: number;
  /** The mark's annotations (execution, lease): the copy carries them, the production Deployment does not. */
  annotations: Record<string, string>;
  /** The ServiceMonitors that scrape the production Service (serviceMonitorsSelecting). */
  monitors: readonly KubeObject[];
}

/**
 * The copy's Deployment and Service, and a ServiceMonitor for every production one that scrapes the production
 * Service (its labels kept, so the same Prometheus selects it; its selector pointed at the copy's Service).
 */
export function shadowObjects(source: ShadowSource): KubeObject[] {
  const { production, service, executionLabel } = source;
  const namespace = production.metadata.namespace ?? 'default';
  const name = shadowDeploymentName(production.metadata.name);
  const own = { [SHADOW_LABEL]: production.metadata.name, [EXECUTION_LABEL]: executionLabel };
  const selector = { [SHADOW_LABEL]: production.metadata.name };
  const spec = (production.spec ?? {}) as { template?: { metadata?: { annotations?: Record<string, string> } } };
  const template = (spec.template ?? {}) as { spec?: unknown; metadata?: { annotations?: Record<string, string> } };

  // Only the Pod template is copied: the production Deployment's own labels and annotations (an Argo CD tracking
  // label, kubectl's last-applied configuration) would make tools take the copy for theirs.
  const { paused: _paused, replicas: _replicas, selector: _selector, ...rest } = spec as Record<string, unknown>;
  const deployment: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: own, annotations: source.annotations },
    spec: {
      ...rest,
      replicas: source.replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels: own,
          ...(template.metadata?.annotations === undefined ? {} : { annotations: template.metadata.annotations }),
        },
        spec: template.spec,
      },
    },
  };
  const ports = ((service.spec as { ports?: Array<Record<string, unknown>> } | undefined)?.ports ?? []).map(
    ({ nodePort: _nodePort, ...port }) => port,
  );
  const copyService: KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: own },
    spec: { type: 'ClusterIP', selector, ports },
  };
  const monitors = source.monitors.map((monitor, i): KubeObject => ({
    apiVersion: monitor.apiVersion,
    kind: monitor.kind,
    metadata: {
      name: i === 0 ? name : `${name}-${i}`,
      namespace,
      labels: { ...(monitor.metadata.labels ?? {}), ...own },
    },
    spec: {
      ...(monitor.spec as object),
      selector: { matchLabels: own },
      namespaceSelector: { matchNames: [namespace] },
    },
  }));
  return [deployment, copyService, ...monitors];
}

/**
 * Refuses a copy whose Pods a production Service of its namespace would select (CalibrationShadowExposedError): users
 * would reach the saturated copy. Its labels are the product's own, so only a Service that selects on them can.
 */
export function assertShadowUnexposed(services: readonly KubeObject[], deployment: KubeObject): void {
  const labels = podTemplateLabels(deployment);
  const exposing = services.filter(
    (s) =>
      s.metadata.labels?.[SHADOW_LABEL] === undefined &&
      selectorSelects((s.spec as { selector?: Record<string, string> } | undefined)?.selector ?? {}, labels),
  );
  if (exposing.length > 0)
    throw new CalibrationShadowExposedError(
      `Service ${exposing.map((s) => s.metadata.name).join(', ')} would select the Pods of the shadow copy ` +
        `${deployment.metadata.name} (labels ${JSON.stringify(labels)}), so users would reach its saturated replica; ` +
        'accepted: Services that select production Pods by their own labels',
    );
}

/** The copy's kinds, in the order the cleanup deletes them (the ServiceMonitor first: no scrape of a going Pod). */
const SHADOW_KINDS = [KINDS.serviceMonitor, KINDS.deployment, KINDS.service] as const;

/**
 * Deletes the copy an execution made (objects with its execution label and SHADOW_LABEL): the names of those that were
 * there. Idempotent; a cluster without the ServiceMonitor kind has none to delete.
 */
export async function deleteShadow(
  cluster: ClusterClient,
  namespace: string,
  executionLabel: string,
): Promise<string[]> {
  const deleted: string[] = [];
  for (const kind of SHADOW_KINDS) {
    let objects: KubeObject[];
    try {
      objects = await cluster.list({ ...kind, namespace, labelSelector: { [EXECUTION_LABEL]: executionLabel } });
    } catch (error) {
      if (error instanceof KubeNotFoundError) continue;
      throw error;
    }
    for (const object of objects.filter((o) => o.metadata.labels?.[SHADOW_LABEL] !== undefined)) {
      const gone = await cluster.delete(
        { ...kind, namespace, name: object.metadata.name },
        // Background: the copy's Pods (and their GPUs) go too; the caller need not wait for them.
        { propagationPolicy: PROPAGATION_POLICIES.background },
      );
      if (gone) deleted.push(`${kind.kind.toLowerCase()} ${object.metadata.name}`);
    }
  }
  return deleted;
}

/**
 * The Prometheus triggers of the production ScaledObject whose query selects no Pods (`pod=~`): the guide's
 * `sum(vllm:num_requests_waiting)` counts every replica of the model, the copy's saturated queue included, so KEDA
 * would scale production up during the test. Their indexes, for Deploy's warning.
 */
export function triggersSeeingTheCopy(scaledObject: KubeObject): number[] {
  const triggers = (scaledObject.spec as { triggers?: unknown } | undefined)?.triggers;
  return (Array.isArray(triggers) ? (triggers as Array<{ type?: unknown; metadata?: { query?: unknown } }>) : [])
    .map((trigger, index) => ({ trigger, index }))
    .filter(
      ({ trigger }) =>
        trigger.type === 'prometheus' &&
        typeof trigger.metadata?.query === 'string' &&
        !/\bpod\s*=~/.test(trigger.metadata.query),
    )
    .map(({ index }) => index);
}

/**
 * Why the copy's rollout cannot finish for want of a GPU, from its Pods: the first one the scheduler could not place
 * (PodScheduled False, Unschedulable), with the scheduler's message; undefined when every Pod was placed.
 */
export async function unschedulableReason(
  cluster: Pick<ClusterClient, 'listPods'>,
  copy: KubeObject,
): Promise<string | undefined> {
  const pods = await cluster.listPods(copy.metadata.namespace ?? 'default', {
    [SHADOW_LABEL]: copy.metadata.labels?.[SHADOW_LABEL] ?? '',
  });
  for (const pod of pods.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const conditions = (pod.status as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? [];
    const scheduled = conditions.find((c) => c.type === 'PodScheduled');
    if (scheduled?.status === 'False')
      return `Pod ${pod.metadata.name} is Pending: ${scheduled.reason ?? 'Unschedulable'}: ${scheduled.message ?? 'no node fits it'}`;
  }
  return undefined;
}

/** CalibrationShadowNoGpuError for a copy whose Pod found no node within the rollout timeout. */
export function noGpuError(copy: KubeObject, reason: string, timeoutSeconds: number): CalibrationShadowNoGpuError {
  return new CalibrationShadowNoGpuError(
    `the shadow copy ${copy.metadata.namespace ?? 'default'}/${copy.metadata.name} found no free GPU within ` +
      `rollout.timeoutSeconds (${timeoutSeconds} s): ${reason}; free a GPU or raise the NodePool's limits ` +
      '(nvidia.com/gpu), or calibrate the live Deployment with deploy.mode "adopt" (it pauses KEDA and saturates a ' +
      'production replica; refused while it serves users unless deploy.allowServingTraffic is true)',
  );
}
