import { KINDS, podTemplateLabels, servicesSelecting, type ClusterClient, type KubeObject } from '../../kube/index.js';
import { CalibrationTargetNotFoundError, CalibrationTargetReleasedError } from '../errors.js';
import { CALIBRATION_ANNOTATIONS } from './names.js';

/** The Deployment under calibration and the Service in front of it, with the calibration's errors when missing. */

/** The live Deployment, or CalibrationTargetNotFoundError naming it. */
export async function requireDeployment(
  cluster: Pick<ClusterClient, 'get'>,
  namespace: string,
  name: string,
): Promise<KubeObject> {
  const deployment = await cluster.get({ ...KINDS.deployment, namespace, name });
  if (deployment === undefined)
    throw new CalibrationTargetNotFoundError(
      `Deployment ${namespace}/${name} does not exist; accepted: the name of a running vLLM Deployment (deploy.mode ` +
        '"adopt"), or deploy.mode "apply" to create it',
    );
  return deployment;
}

/**
 * The Service in front of the Deployment's Pods: the first (by name) Service whose selector the Pod labels satisfy,
 * with its port named `http` (the product's manifests) or its first port; CalibrationTargetNotFoundError when none.
 */
export async function frontService(
  cluster: Pick<ClusterClient, 'list'>,
  deployment: KubeObject,
): Promise<{ service: KubeObject; port: number }> {
  const namespace = deployment.metadata.namespace ?? 'default';
  const [service] = await servicesSelecting(cluster, deployment);
  const ports = (service?.spec as { ports?: Array<{ name?: string; port: number }> } | undefined)?.ports ?? [];
  const port = ports.find((p) => p.name === 'http') ?? ports[0];
  if (service === undefined || port === undefined) {
    throw new CalibrationTargetNotFoundError(
      `no Service in namespace ${namespace} selects the Pods of Deployment ${deployment.metadata.name} ` +
        `(labels ${JSON.stringify(podTemplateLabels(deployment))}); accepted: a Service whose selector matches them, with a port`,
    );
  }
  return { service, port: port.port };
}

/** The in-cluster URL of frontService: what the k6 Jobs load. */
export async function serviceUrlFor(cluster: Pick<ClusterClient, 'list'>, deployment: KubeObject): Promise<string> {
  const { service, port } = await frontService(cluster, deployment);
  return `http://${service.metadata.name}.${service.metadata.namespace ?? 'default'}.svc:${port}`;
}

/**
 * Refuses to go on when the Deployment no longer carries this execution's mark (CalibrationTargetReleasedError): a
 * task that creates load (a k6 Job) checks it first, so a task still running when its execution was stopped and
 * cleaned up does not start load on a target that was given back. (The window between this check and the creation is
 * a request's length; what a late task still leaves, the lease sweep removes.)
 */
export async function requireHeld(
  cluster: Pick<ClusterClient, 'get'>,
  namespace: string,
  name: string,
  executionLabel: string,
): Promise<void> {
  const deployment = await requireDeployment(cluster, namespace, name);
  if (deployment.metadata.annotations?.[CALIBRATION_ANNOTATIONS.execution] !== executionLabel)
    throw new CalibrationTargetReleasedError(`${namespace}/${name}`, executionLabel);
}
