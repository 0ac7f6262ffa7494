import { CalibrationDependencyUnavailableError, CalibrationTargetNotFoundError } from '../calibration/index.js';
import { KubeError, KubeNotFoundError, type ClusterClient, type KubeObject } from '../kube/index.js';
import { scaledObjectRef, type ScaledObjectRef } from './kinds.js';

/** updateWithRetry on the ScaledObject, with the calibration's error names (Step Functions matches on them). */
export async function updateScaledObject(
  cluster: ClusterClient,
  ref: ScaledObjectRef,
  verb: string,
  mutate: (live: KubeObject) => void,
): Promise<void> {
  const objectRef = scaledObjectRef(ref);
  const who = `ScaledObject ${ref.namespace}/${ref.name}`;
  try {
    await cluster.updateWithRetry(objectRef, mutate);
  } catch (error) {
    if (error instanceof KubeNotFoundError)
      throw new CalibrationTargetNotFoundError(`cannot ${verb} ${who}: it does not exist`, { cause: error });
    if (error instanceof KubeError && error.retryable)
      throw new CalibrationDependencyUnavailableError(`cannot ${verb} ${who}: ${error.message}`, { cause: error });
    throw error;
  }
}
