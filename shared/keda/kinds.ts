import type { KubeObject, ObjectRef } from '../kube/index.js';

/** KEDA's kinds (keda.sh/v1alpha1), to spread into an ObjectRef or ListRef. */
export const KEDA_KINDS = {
  scaledObject: { apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject' },
  triggerAuthentication: { apiVersion: 'keda.sh/v1alpha1', kind: 'TriggerAuthentication' },
} as const;

/** The ScaledObject the calibration works on. */
export interface ScaledObjectRef {
  namespace: string;
  name: string;
}

/** The ObjectRef of a ScaledObject. */
export function scaledObjectRef(ref: ScaledObjectRef): ObjectRef {
  return { ...KEDA_KINDS.scaledObject, namespace: ref.namespace, name: ref.name };
}

/** KEDA's annotation that scales the target to a count and stops autoscaling (KEDA v2.20, "Pause autoscaling"). */
export const KEDA_PAUSED_REPLICAS_ANNOTATION = 'autoscaling.keda.sh/paused-replicas';

/**
 * Where a pause by the calibration records what it replaced: the user's own paused-replicas value, or `""` when there
 * was none. It lives on the ScaledObject so that a retried pause does not mistake the calibration's own pause for
 * the user's, and so that a resume needs nothing but the object.
 */
export const PAUSE_RECORD_ANNOTATION = 'vllm-eks-pilot/paused-replicas-before';

/** The namespace and name of a live ScaledObject. */
export function refOfScaledObject(scaledObject: KubeObject): ScaledObjectRef {
  return { namespace: scaledObject.metadata.namespace ?? 'default', name: scaledObject.metadata.name };
}

/** `namespace/name`, for messages. */
export function scaledObjectName(scaledObject: KubeObject): string {
  const { namespace, name } = refOfScaledObject(scaledObject);
  return `${namespace}/${name}`;
}
