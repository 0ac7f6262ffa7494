import * as z from 'zod';
import { findTriggers, KEDA_KINDS, pauseScaledObject } from '../../keda/index.js';
import {
  KINDS,
  serviceMonitorsSelecting,
  specReplicas,
  type ClusterClient,
  type KubeObject,
} from '../../kube/index.js';
import {
  vllmDeployment,
  vllmService,
  vllmServiceMonitor,
  type VllmDeploymentInputSpec,
} from '../../kube/manifests/index.js';
import { measureBackground, parseLastCalibration, refuseServingTarget, type Background } from '../background.js';
import {
  CalibrationInputInvalidError,
  CalibrationTargetBusyError,
  CalibrationTargetNotFoundError,
  type InputIssue,
} from '../errors.js';
import { maxModelLenOf, maxNumSeqsOf } from '../engineArgs.js';
import { requestMixOf, type CalibrationInput } from '../input.js';
import { longestRequest } from '../../load/index.js';
import { silenceTargetKey } from '../../alerts/silences/index.js';
import { calibrationSilence, formatLease, leaseFor, type CalibrationLease } from './calibrationLease.js';
import { CALIBRATION_ANNOTATIONS, executionNames } from './names.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, type DeploymentState } from './state.js';
import type { CalibrationStep } from './step.js';
import { shadowDeploymentName } from '../measuredDeployment.js';
import { assertShadowUnexposed, shadowObjects, triggersSeeingTheCopy } from './shadow.js';
import { frontService, requireDeployment, serviceUrlFor } from './target.js';

const event = z.object(baseEventShape);
type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'metricsSource' | 'silences'>;

/**
 * Deploy: makes the Deployment the load will go to, and holds it for this execution (a mark and a lease, so any
 * cleanup can undo what it did). Three modes (input.ts `deploy`):
 * - `shadow` (default): a copy of the live Deployment with its own Service and ServiceMonitor (shadow.ts), at
 *   `testReplicas`; the production Deployment, its ScaledObject and its alerts are not touched.
 * - `adopt`: the running Deployment. First, before any change, it measures what the target already serves
 *   (shared/calibration/background.ts) and refuses a target that serves users unless `deploy.allowServingTraffic`
 *   is true; then records the replica count, pauses the ScaledObject at `testReplicas`, scales the Deployment to it,
 *   and mutes the target's alerts until the cleanup.
 * - `apply`: the product's vLLM Deployment, Service and ServiceMonitor applied first, then as `adopt`.
 * Either way another execution's hold on the target or on its copy is refused (CalibrationTargetBusyError). Safe to
 * retry: the record of the first attempt is kept.
 */
export async function deploy(ports: Ports, parsed: z.output<typeof event>): Promise<DeploymentState> {
  const { input, execution } = parsed;
  const { namespace, deployment: name } = input.target;
  const names = executionNames(execution.name);
  const cluster = await ports.cluster(input.target);

  const live = await cluster.get({ ...KINDS.deployment, namespace, name });
  const copyName = shadowDeploymentName(name);
  const copy = await cluster.get({ ...KINDS.deployment, namespace, name: copyName });
  for (const [held, heldName] of [
    [live, name],
    [copy, copyName],
  ] as const) {
    const mark =
      held === undefined ? undefined : (held.metadata.annotations?.[CALIBRATION_ANNOTATIONS.execution] ?? '');
    // A copy always carries its execution's mark: one without it was left by hand, and is not this execution's.
    if (mark !== undefined && (held === copy || mark !== '') && mark !== names.label)
      throw new CalibrationTargetBusyError(`${namespace}/${heldName}`, mark, CALIBRATION_ANNOTATIONS.execution);
  }

  // The ScaledObject first: with apply=true and none to write to, fail before measuring for minutes.
  const scaledObjectName = input.scaledObject.name ?? name;
  const scaledObject = await cluster.get({ ...KEDA_KINDS.scaledObject, namespace, name: scaledObjectName });
  if (input.scaledObject.apply) {
    if (scaledObject === undefined)
      throw new CalibrationTargetNotFoundError(
        `scaledObject.apply is true but ScaledObject ${namespace}/${scaledObjectName} does not exist; accepted: an ` +
          'existing ScaledObject (vllm-pilot render scaledobject writes one), or scaledObject.apply false for a dry run',
      );
    findTriggers(scaledObject);
  }
  // Bounds only the cluster knows, before the first write (the shadow copy, a mark, a pause).
  const issues = clusterBounds(input, live, scaledObject);
  if (issues.length > 0) throw new CalibrationInputInvalidError(issues);

  const state =
    input.deploy.mode === 'shadow'
      ? await deployShadow(ports, cluster, parsed, scaledObject)
      : await deployInPlace(ports, cluster, parsed, live, scaledObject === undefined ? null : scaledObjectName);
  ports.logger.info('deployment ready for the calibration', { execution: execution.name, ...state });
  return state;
}

/** KEDA's maxReplicaCount when the ScaledObject leaves it out (keda.sh/docs/latest/reference/scaledobject-spec). */
const KEDA_DEFAULT_MAX_REPLICAS = 100;

/**
 * The input's bounds that depend on the cluster: testReplicas within the ScaledObject's maxReplicaCount, and a request
 * (promptTokens + maxTokens) within the Deployment's `--max-model-len` (deploy.mode apply: ValidateInput checked
 * deploy.maxModelLen). A fact the cluster does not state (no ScaledObject, no flag) is not guessed.
 */
export function clusterBounds(
  input: CalibrationInput,
  live: KubeObject | undefined,
  scaledObject: KubeObject | undefined,
): InputIssue[] {
  const issues: InputIssue[] = [];
  if (scaledObject !== undefined) {
    const max = (scaledObject.spec as { maxReplicaCount?: unknown } | undefined)?.maxReplicaCount;
    const maxReplicas = typeof max === 'number' ? max : KEDA_DEFAULT_MAX_REPLICAS;
    if (input.testReplicas > maxReplicas)
      issues.push({
        path: 'testReplicas',
        message:
          `${input.testReplicas} is above ScaledObject ${scaledObject.metadata.name}'s maxReplicaCount ` +
          `(${maxReplicas}); accepted: at most ${maxReplicas}`,
      });
  }
  const maxModelLen = input.deploy.mode === 'apply' || live === undefined ? null : maxModelLenOf(live);
  // A distribution's longest request: one draw that does not fit would fail with a 400 mid-step.
  const request = longestRequest(requestMixOf(input.request));
  if (maxModelLen !== null && request > maxModelLen)
    issues.push({
      path: 'request.maxTokens',
      message:
        `promptTokens + maxTokens = ${request} tokens exceeds --max-model-len ${maxModelLen} of Deployment ` +
        `${input.target.namespace}/${input.target.deployment}; accepted: a request that fits the model's context`,
    });
  return issues;
}

/** deploy.mode shadow: the copy, held by this execution; production is only read. */
async function deployShadow(
  ports: Ports,
  cluster: ClusterClient,
  { input, execution }: z.output<typeof event>,
  scaledObject: KubeObject | undefined,
): Promise<DeploymentState> {
  const { namespace, deployment: name } = input.target;
  const label = executionNames(execution.name).label;
  const production = await requireDeployment(cluster, namespace, name);
  const { service } = await frontService(cluster, production);
  const lease = leaseFor(execution, null, 0);
  const objects = shadowObjects({
    production,
    service,
    monitors: await serviceMonitorsSelecting(cluster, service),
    executionLabel: label,
    replicas: input.testReplicas,
    annotations: {
      [CALIBRATION_ANNOTATIONS.execution]: label,
      [CALIBRATION_ANNOTATIONS.replicasBefore]: '',
      [CALIBRATION_ANNOTATIONS.lease]: formatLease(lease),
    },
  });
  const [copy] = objects;
  if (copy === undefined) throw new Error('shadowObjects returned no Deployment');
  assertShadowUnexposed(await cluster.list({ ...KINDS.service, namespace }), copy);
  const actions: string[] = [];
  for (const object of objects) {
    const { action } = await cluster.apply(object);
    actions.push(`${object.kind.toLowerCase()} ${object.metadata.name} ${action}`);
  }
  actions.push(`deployment ${name} untouched: users stay on it, its alerts stay on`);
  const seeing = scaledObject === undefined ? [] : triggersSeeingTheCopy(scaledObject);
  if (scaledObject !== undefined && seeing.length > 0)
    actions.push(
      `warning: ScaledObject ${scaledObject.metadata.name} trigger(s) ${seeing.join(', ')} select no Pods (no pod=~ ` +
        "matcher): they count the copy's queue too, so KEDA may scale production up during the test " +
        '(vllm-pilot render scaledobject scopes its queries to the Deployment)',
    );
  const deployed = await requireDeployment(cluster, namespace, copy.metadata.name);
  return {
    namespace,
    name: copy.metadata.name,
    shadowOf: name,
    serviceUrl: await serviceUrlFor(cluster, deployed),
    replicasBefore: null,
    testReplicas: input.testReplicas,
    // Production's, for the thresholds: running as before (the copy has none).
    scaledObject: scaledObject === undefined ? null : { namespace, name: scaledObject.metadata.name },
    startedAtMs: ports.clock.now(),
    actions,
    background: { rateRps: 0, reason: `the shadow copy ${copy.metadata.name} serves nobody: users stay on ${name}` },
    maxNumSeqs: maxNumSeqsOf(deployed),
  };
}

/** deploy.mode adopt or apply: the live Deployment itself, refused while it serves users unless allowed. */
async function deployInPlace(
  ports: Ports,
  cluster: ClusterClient,
  { input, execution }: z.output<typeof event>,
  live: KubeObject | undefined,
  scaledObjectName: string | null,
): Promise<DeploymentState> {
  const { namespace, deployment: name } = input.target;
  const names = executionNames(execution.name);
  const mark = live?.metadata.annotations?.[CALIBRATION_ANNOTATIONS.execution];
  const actions: string[] = [];

  // The target's own users, measured before anything changes (a refusal leaves the cluster as it was). A Deployment
  // that does not exist yet (apply) serves nobody.
  const background: Background =
    live === undefined
      ? { rateRps: 0, reason: 'the Deployment does not exist yet: it serves nobody' }
      : await measureBackground(
          ports.metricsSource(input.target),
          input,
          ports.clock.now(),
          parseLastCalibration(live.metadata.annotations?.[CALIBRATION_ANNOTATIONS.lastCalibration]),
        );
  refuseServingTarget(input, background);

  // What to restore: the replica count before the first attempt, which a retry finds recorded on the Deployment.
  const recorded =
    mark === undefined ? undefined : live?.metadata.annotations?.[CALIBRATION_ANNOTATIONS.replicasBefore];
  const replicasBefore =
    recorded !== undefined
      ? recorded === ''
        ? null
        : Number(recorded)
      : live === undefined
        ? null
        : specReplicas(live);

  if (input.deploy.mode === 'apply') {
    const spec = manifestInput(input);
    for (const object of [vllmDeployment(spec), vllmService(spec), vllmServiceMonitor(spec)]) {
      const { action } = await cluster.apply(object);
      actions.push(`${object.kind.toLowerCase()} ${object.metadata.name} ${action}`);
    }
  } else {
    await requireDeployment(cluster, namespace, name);
    actions.push(`deployment ${name} adopted`);
  }
  const lease = leaseFor(execution, scaledObjectName, background.rateRps);
  await markDeployment(cluster, namespace, name, names.label, replicasBefore, lease);
  // The saturation to come is deliberate: the target's alerts are muted until the cleanup (or the lease's end).
  if (ports.silences !== undefined) {
    await ports.silences.put(calibrationSilence(input.target, execution, names.label, ports.clock.now(), lease));
    actions.push(`alerts of ${silenceTargetKey(input.target)} muted until the cleanup`);
  }

  if (scaledObjectName !== null) {
    const pause = await pauseScaledObject(cluster, { namespace, name: scaledObjectName }, input.testReplicas);
    actions.push(`scaledobject ${scaledObjectName} paused at ${pause.pausedReplicas} replicas`);
  }
  await cluster.scale({ namespace, name }, input.testReplicas);
  actions.push(`deployment ${name} scaled to ${input.testReplicas} (was ${replicasBefore ?? 'not there'})`);

  const deployed = await requireDeployment(cluster, namespace, name);
  return {
    namespace,
    name,
    serviceUrl: await serviceUrlFor(cluster, deployed),
    replicasBefore,
    testReplicas: input.testReplicas,
    scaledObject: scaledObjectName === null ? null : { namespace, name: scaledObjectName },
    startedAtMs: ports.clock.now(),
    actions,
    background,
    maxNumSeqs: maxNumSeqsOf(deployed),
  };
}

export const deployStep = {
  name: 'deploy',
  label: 'Deploy',
  placeholder: 'DeployFunctionArn',
  event,
  run: deploy,
} satisfies CalibrationStep<typeof event, DeploymentState, Ports>;

/** The product's vLLM manifests for deploy.mode `apply` (replicas left out: the scale below sets them). */
function manifestInput(input: CalibrationInput): VllmDeploymentInputSpec {
  const deploy = input.deploy;
  if (deploy.mode !== 'apply') throw new Error('manifestInput: deploy.mode is not apply');
  return {
    name: input.target.deployment,
    namespace: input.target.namespace,
    model: deploy.modelSource ?? input.target.model,
    servedModelName: input.target.model,
    maxModelLen: deploy.maxModelLen,
    replicas: null,
    ...(deploy.image === undefined ? {} : { image: deploy.image }),
    ...(deploy.gpuMemoryUtilization === undefined ? {} : { gpuMemoryUtilization: deploy.gpuMemoryUtilization }),
    ...(deploy.maxNumSeqs === undefined ? {} : { maxNumSeqs: deploy.maxNumSeqs }),
  };
}

/**
 * Marks the Deployment as being calibrated by this execution, with the replica count to restore and the lease
 * (calibrationLease.ts), before anything is paused or scaled: whatever ends the execution, a cleanup finds them.
 */
async function markDeployment(
  cluster: ClusterClient,
  namespace: string,
  name: string,
  label: string,
  replicasBefore: number | null,
  lease: CalibrationLease,
): Promise<void> {
  await cluster.patchMerge<KubeObject>(
    { ...KINDS.deployment, namespace, name },
    {
      metadata: {
        annotations: {
          [CALIBRATION_ANNOTATIONS.execution]: label,
          [CALIBRATION_ANNOTATIONS.replicasBefore]: replicasBefore === null ? '' : String(replicasBefore),
          [CALIBRATION_ANNOTATIONS.lease]: formatLease(lease),
        },
      },
    },
  );
}
