import { CalibrationTargetNotFoundError } from '../../shared/calibration/errors.js';
import type { ClusterClient, KubeObject, ObjectRef } from '../../shared/kube/types.js';

/**
 * The Kubernetes reads and writes of the calibration's workflow steps (Deployment status, Services, Jobs, Pods),
 * over the ClusterClient port. Decisions take `nowMs`; none reads the clock.
 */

export const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;
export const SERVICE = { apiVersion: 'v1', kind: 'Service' } as const;
export const JOB = { apiVersion: 'batch/v1', kind: 'Job' } as const;
export const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
export const SCALED_OBJECT = { apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject' } as const;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The live Deployment, or CalibrationTargetNotFoundError naming it. */
export async function readDeployment(cluster: ClusterClient, namespace: string, name: string): Promise<KubeObject> {
  const deployment = await cluster.get({ ...DEPLOYMENT, namespace, name });
  if (deployment === undefined)
    throw new CalibrationTargetNotFoundError(
      `Deployment ${namespace}/${name} does not exist; accepted: the name of a running vLLM Deployment (deploy.mode ` +
        '"adopt"), or deploy.mode "apply" to create it',
    );
  return deployment;
}

/** The Deployment's Pod selector (`spec.selector.matchLabels`). */
export function podSelector(deployment: KubeObject): Record<string, string> {
  return (
    (deployment.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels ??
    {}
  );
}

export function specReplicas(deployment: KubeObject): number {
  const replicas = (deployment.spec as { replicas?: number } | undefined)?.replicas;
  // Kubernetes defaults spec.replicas to 1.
  return typeof replicas === 'number' ? replicas : 1;
}

/** Whether a rollout is finished (as `kubectl rollout status` decides), with the reason either way. */
export interface RolloutStatus {
  done: boolean;
  /** The rollout can no longer finish (Progressing=False, ProgressDeadlineExceeded). */
  stuck: boolean;
  reason: string;
}

/**
 * `kubectl rollout status` semantics (kubectl's DeploymentStatusViewer): the controller saw the latest generation,
 * every replica is updated, no old replica is left, and every replica is available.
 */
export function rolloutStatus(deployment: KubeObject): RolloutStatus {
  const status = (deployment.status ?? {}) as {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: Condition[];
  };
  const desired = specReplicas(deployment);
  const generation = deployment.metadata.generation ?? 0;
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded')
    return { done: false, stuck: true, reason: progressing.message ?? 'the rollout exceeded its progress deadline' };
  if ((status.observedGeneration ?? 0) < generation)
    return { done: false, stuck: false, reason: `waiting for the controller to see generation ${generation}` };
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if (updated < desired) return { done: false, stuck: false, reason: `${updated} of ${desired} replicas updated` };
  if (total > updated)
    return { done: false, stuck: false, reason: `${total - updated} old replica(s) still terminating` };
  if (available < updated)
    return { done: false, stuck: false, reason: `${available} of ${updated} updated replicas available` };
  return { done: true, stuck: false, reason: `${available} of ${desired} replicas updated and available` };
}

/**
 * The in-cluster URL of the Service in front of the Deployment's Pods: the Service whose selector the Pod labels
 * satisfy, its port named `http` (the product's manifests) or its first port.
 */
export async function serviceUrlFor(cluster: ClusterClient, deployment: KubeObject): Promise<string> {
  const namespace = deployment.metadata.namespace ?? 'default';
  const podLabels =
    (deployment.spec as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined)?.template
      ?.metadata?.labels ?? {};
  const services = await cluster.list({ ...SERVICE, namespace });
  const matching = services.filter((service) => {
    const selector = (service.spec as { selector?: Record<string, string> } | undefined)?.selector ?? {};
    const keys = Object.keys(selector);
    return keys.length > 0 && keys.every((key) => podLabels[key] === selector[key]);
  });
  const service = matching.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))[0];
  const ports = (service?.spec as { ports?: Array<{ name?: string; port: number }> } | undefined)?.ports ?? [];
  const port = ports.find((p) => p.name === 'http') ?? ports[0];
  if (service === undefined || port === undefined)
    throw new CalibrationTargetNotFoundError(
      `no Service in namespace ${namespace} selects the Pods of Deployment ${deployment.metadata.name} ` +
        `(labels ${JSON.stringify(podLabels)}); accepted: a Service whose selector matches them, with a port`,
    );
  return `http://${service.metadata.name}.${namespace}.svc:${port.port}`;
}

/** The Ready, not terminating Pods of a Deployment, by name. */
export async function readyPods(cluster: ClusterClient, deployment: KubeObject): Promise<string[]> {
  const pods = await cluster.listPods(deployment.metadata.namespace ?? 'default', podSelector(deployment));
  return pods
    .filter((pod) => pod.metadata.deletionTimestamp === undefined)
    .filter((pod) =>
      ((pod.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).some(
        (c) => c.type === 'Ready' && c.status === 'True',
      ),
    )
    .map((pod) => pod.metadata.name)
    .sort();
}

/**
 * Creates the Job unless one of that name exists, and returns the live one either way: a retried task must not
 * start a second load. `created` says which; `createdAtMs` is `nowMs` (taken just before the create, to the
 * millisecond) for a new Job, and the creationTimestamp (whole seconds) of one found.
 */
export async function ensureJob(
  cluster: ClusterClient,
  job: KubeObject,
  nowMs: number,
): Promise<{ job: KubeObject; created: boolean; createdAtMs: number }> {
  const ref: ObjectRef = { ...JOB, namespace: job.metadata.namespace ?? 'default', name: job.metadata.name };
  const existing = await cluster.get(ref);
  if (existing !== undefined) {
    const at = Date.parse(existing.metadata.creationTimestamp ?? '');
    return { job: existing, created: false, createdAtMs: Number.isFinite(at) ? Math.min(at, nowMs) : nowMs };
  }
  const { object } = await cluster.apply(job);
  return { job: object, created: true, createdAtMs: nowMs };
}

/** Where a Job stands. */
export type JobPhase =
  { phase: 'running'; reason: string } | { phase: 'succeeded'; reason: string } | { phase: 'failed'; reason: string };

/** A Job's phase from its terminal conditions (Complete / Failed), as `kubectl wait --for=condition=...` reads them. */
export function jobPhase(job: KubeObject): JobPhase {
  const status = (job.status ?? {}) as {
    conditions?: Condition[];
    active?: number;
    succeeded?: number;
    failed?: number;
  };
  const condition = (type: string) => status.conditions?.find((c) => c.type === type && c.status === 'True');
  const failed = condition('Failed');
  if (failed) return { phase: 'failed', reason: `${failed.reason ?? 'Failed'}: ${failed.message ?? ''}`.trim() };
  const complete = condition('Complete');
  if (complete) return { phase: 'succeeded', reason: `${complete.reason ?? 'Complete'}` };
  return { phase: 'running', reason: `${status.active ?? 0} Pod(s) active` };
}

/** The Job's newest Pod (label `job-name`, which the Job controller sets), or undefined. */
export async function jobPod(
  cluster: ClusterClient,
  namespace: string,
  jobName: string,
): Promise<KubeObject | undefined> {
  const pods = await cluster.listPods(namespace, { 'job-name': jobName });
  return pods
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''))
    .at(-1);
}

/** The first container's start (epoch ms) from the Pod status, or undefined before it ran. */
export function containerStartMs(pod: KubeObject): number | undefined {
  const statuses =
    (
      pod.status as
        | {
            containerStatuses?: Array<{
              state?: { running?: { startedAt?: string }; terminated?: { startedAt?: string } };
            }>;
          }
        | undefined
    )?.containerStatuses ?? [];
  const state = statuses[0]?.state;
  const at = Date.parse(state?.running?.startedAt ?? state?.terminated?.startedAt ?? '');
  return Number.isFinite(at) ? at : undefined;
}

/** The last `lines` lines of text (a log tail for an error message). */
export function tail(text: string, lines: number): string {
  return text.trimEnd().split(/\r?\n/).slice(-lines).join('\n');
}
