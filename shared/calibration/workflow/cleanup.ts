import * as z from 'zod';
import { KEDA_KINDS, resumeScaledObject, type ScaledObjectResume } from '../../keda/index.js';
import { KINDS, PROPAGATION_POLICIES, type ClusterClient, type KubeObject } from '../../kube/index.js';
import { lastCalibrationRecord } from '../background.js';
import { silenceTargetKey } from '../../alerts/silences/index.js';
import { calibrationSilenceId, parseLease } from './calibrationLease.js';
import { calibrationInputSchema } from '../input.js';
import { CALIBRATION_ANNOTATIONS, EXECUTION_LABEL, executionNames } from './names.js';
import { measuredDeployment } from '../measuredDeployment.js';
import { deleteShadow, isShadow } from './shadow.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { deploymentStateSchema, executionSchema } from './state.js';
import type { CalibrationStep } from './step.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'silences'>;
// The input may be the raw one: the failure path runs this after ValidateInput refused it.
const event = z.object({
  input: z.unknown(),
  execution: executionSchema,
  deployment: deploymentStateSchema.nullable(),
});

/** `$.cleanup`: what the cleanup undid, with the reason where it did nothing. */
export interface CleanupResult {
  deletedJobs: string[];
  deletedConfigMaps: string[];
  /** The replica count put back; null when there was none to restore (with `replicasReason`). */
  replicasRestored: number | null;
  replicasReason: string;
  scaledObject: ScaledObjectResume | null;
  /** deploy.mode shadow: the copy's objects deleted (`deployment vllm-shadow`, ...). */
  deletedShadow?: string[];
  /** Whether this execution's alert silence was there and is removed. */
  alertsUnmuted?: boolean;
  /** Set when nothing was looked at, e.g. the input was refused before anything was created. */
  skipped?: string;
}

/**
 * Cleanup and CleanupAfterFailure: releaseTarget for this execution's target (see there). Works from what is in the
 * cluster, not only from the state, so it also undoes a Deploy that failed half-way; idempotent.
 */
export async function cleanup(
  ports: Ports,
  { input: raw, execution, deployment }: z.output<typeof event>,
): Promise<CleanupResult> {
  const parsed = calibrationInputSchema.safeParse(raw);
  if (!parsed.success)
    return {
      deletedJobs: [],
      deletedConfigMaps: [],
      replicasRestored: null,
      replicasReason: 'nothing to restore',
      scaledObject: null,
      skipped: 'the input was refused by ValidateInput, before anything was created',
    };
  const input = parsed.data;
  // Without Deploy's state (it failed half-way), the Deployment the mode puts the load on.
  const name = deployment?.name ?? measuredDeployment(input);
  return releaseTarget(ports, {
    cluster: await ports.cluster(input.target),
    namespace: deployment?.namespace ?? input.target.namespace,
    deployment: name,
    scaledObject: deployment?.scaledObject?.name ?? input.scaledObject.name ?? name,
    executionName: execution.name,
    backgroundRps: deployment?.background.rateRps ?? null,
    silenceTarget: silenceTargetKey(input.target),
  });
}

/** What releaseTarget releases: one execution's hold on one Deployment. */
export interface ReleaseRequest {
  cluster: ClusterClient;
  namespace: string;
  deployment: string;
  /** The ScaledObject to resume (Deploy's state or the input's; for the sweep the lease's); only if it exists. */
  scaledObject: string | null;
  executionName: string;
  /** The background the execution measured before it began, for the last-calibration record; null: the lease's. */
  backgroundRps: number | null;
  /** The target's silence key (silenceTargetKey): the execution's silence on it is removed. */
  silenceTarget: string;
}

/**
 * Undoes what one execution changed on its target, KEDA first: resumes the ScaledObject (KEDA back in charge, or
 * the user's own pause restored), so the target regains its capacity before anything else; then puts back the
 * replica count Deploy recorded; then deletes the execution's Jobs (with their Pods, so its load stops) and
 * ConfigMaps by the execution label, and its shadow copy (shadow.ts) if it made one; then removes the mark and the
 * lease; last, the execution's alert silence. Only what this execution changed is undone: another execution's pause
 * or record is left alone. Idempotent: a second run finds nothing to do. Shared by the state machine's Cleanup
 * states, the ended-execution rule and the sweep.
 */
export async function releaseTarget(
  ports: BasePorts & Pick<CalibrationPorts, 'silences'>,
  request: ReleaseRequest,
): Promise<CleanupResult> {
  const { cluster, namespace, deployment: name, executionName } = request;
  const names = executionNames(executionName);
  const live = await cluster.get({ ...KINDS.deployment, namespace, name });
  const ours = live?.metadata.annotations?.[CALIBRATION_ANNOTATIONS.execution] === names.label;
  const lease = ours ? parseLease(live?.metadata.annotations?.[CALIBRATION_ANNOTATIONS.lease]) : undefined;
  // A shadow copy is deleted whole below: production's ScaledObject and replicas were never changed.
  const shadow = isShadow(live);

  const scaledObject =
    ours &&
    !shadow &&
    request.scaledObject !== null &&
    (await cluster.get({ ...KEDA_KINDS.scaledObject, namespace, name: request.scaledObject })) !== undefined
      ? await resumeScaledObject(cluster, { namespace, name: request.scaledObject })
      : null;
  const { replicasRestored, replicasReason } =
    live === undefined
      ? { replicasRestored: null, replicasReason: `Deployment ${namespace}/${name} is gone` }
      : shadow
        ? { replicasRestored: null, replicasReason: 'a shadow copy: production replicas were never changed' }
        : ours
          ? await restoreReplicas(cluster, live)
          : { replicasRestored: null, replicasReason: 'the Deployment carries no record of this execution' };

  const selector = { [EXECUTION_LABEL]: names.label };
  const deletedJobs = await deleteAll(
    cluster,
    await cluster.list({ ...KINDS.job, namespace, labelSelector: selector }),
  );
  const deletedConfigMaps = await deleteAll(
    cluster,
    await cluster.list({ ...KINDS.configMap, namespace, labelSelector: selector }),
  );

  const deletedShadow = await deleteShadow(cluster, namespace, names.label);

  // The record goes last, so a cleanup that fails half-way still recognises its own changes when retried.
  if (ours && !shadow)
    await cluster.patchMerge(
      { ...KINDS.deployment, namespace, name },
      {
        metadata: {
          annotations: {
            [CALIBRATION_ANNOTATIONS.execution]: null,
            [CALIBRATION_ANNOTATIONS.replicasBefore]: null,
            [CALIBRATION_ANNOTATIONS.lease]: null,
            [CALIBRATION_ANNOTATIONS.lastCalibration]: lastCalibrationRecord(
              ports.clock.now(),
              request.backgroundRps ?? lease?.backgroundRps ?? null,
            ),
          },
        },
      },
    );

  // The alerts come back last, once the target is itself again. By id, whoever holds the mark: a retried cleanup
  // whose first attempt removed the mark still removes the silence.
  const alertsUnmuted =
    ports.silences === undefined
      ? false
      : await ports.silences.delete(request.silenceTarget, calibrationSilenceId(names.label));

  const result: CleanupResult = {
    deletedJobs,
    deletedConfigMaps,
    replicasRestored,
    replicasReason,
    scaledObject,
    ...(deletedShadow.length > 0 ? { deletedShadow } : {}),
    alertsUnmuted,
  };
  ports.logger.info('cleaned up', { execution: executionName, namespace, deployment: name, ...result });
  return result;
}

export const cleanupStep = {
  name: 'cleanup',
  label: 'Cleanup',
  placeholder: 'CleanupFunctionArn',
  event,
  run: cleanup,
} satisfies CalibrationStep<typeof event, CleanupResult, Ports>;

/** Deletes the objects (Jobs take their Pods with them) and returns the names of those that were there. */
async function deleteAll(cluster: ClusterClient, objects: KubeObject[]): Promise<string[]> {
  const deleted: string[] = [];
  for (const object of objects) {
    const gone = await cluster.delete(
      {
        apiVersion: object.apiVersion,
        kind: object.kind,
        namespace: object.metadata.namespace ?? 'default',
        name: object.metadata.name,
      },
      // Background: the Pods (and the load they run) go too; the caller need not wait for them.
      { propagationPolicy: PROPAGATION_POLICIES.background },
    );
    if (gone) deleted.push(object.metadata.name);
  }
  return deleted.sort();
}

/** Scales the Deployment back to the count Deploy recorded on it (none when the calibration created it). */
async function restoreReplicas(
  cluster: ClusterClient,
  live: KubeObject,
): Promise<{ replicasRestored: number | null; replicasReason: string }> {
  const recorded = live.metadata.annotations?.[CALIBRATION_ANNOTATIONS.replicasBefore] ?? '';
  const before = recorded === '' ? Number.NaN : Number(recorded);
  if (!(Number.isInteger(before) && before >= 0))
    return {
      replicasRestored: null,
      replicasReason: 'the calibration created the Deployment: its replica count stays',
    };
  await cluster.scale({ namespace: live.metadata.namespace ?? 'default', name: live.metadata.name }, before);
  return { replicasRestored: before, replicasReason: `scaled back to the ${before} replica(s) it had before` };
}
