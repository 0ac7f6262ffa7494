import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { ReplicaSet } from 'kubernetes-models/apps/v1/ReplicaSet';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Event } from 'kubernetes-models/v1/Event';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Node } from 'kubernetes-models/v1/Node';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Service } from 'kubernetes-models/v1/Service';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import type { StatusCause } from './errors.js';
import type { Kind, KubeObject } from './types.js';

/**
 * Validates objects as the real API server would, with the models generated from the official OpenAPI schemas
 * (core Kubernetes v1.30-era, KEDA's CRDs, the Prometheus operator's CRDs), plus the name rules the schemas do not
 * carry. Returns the problems as Status causes; empty when the object is valid.
 */
interface Validatable {
  validate(): void;
}
type ModelClass = new (data: never) => Validatable;

const MODELS: Readonly<Record<Kind, ModelClass>> = {
  Namespace,
  Pod,
  Service,
  ConfigMap,
  Event,
  Node,
  Deployment,
  ReplicaSet,
  DaemonSet,
  Job,
  HorizontalPodAutoscaler,
  ScaledObject,
  TriggerAuthentication,
  ServiceMonitor,
  CustomResourceDefinition,
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
};

/** DNS-1123 subdomain (most object names) and label (namespaces, services). */
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_NAMED: ReadonlySet<Kind> = new Set(['Namespace', 'Service']);

export function validateObject(kind: Kind, object: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = object.metadata?.name ?? '';
  const labelNamed = LABEL_NAMED.has(kind);
  const pattern = labelNamed ? DNS1123_LABEL : DNS1123_SUBDOMAIN;
  const max = labelNamed ? 63 : 253;
  // Events and CRDs have dotted names; the subdomain rule covers them.
  if (!pattern.test(name) || name.length > max) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'metadata.name',
      message: `Invalid value: "${name}": a lowercase RFC 1123 ${labelNamed ? 'label' : 'subdomain'} must consist of lower case alphanumeric characters, '-'${labelNamed ? '' : " or '.'"}, and must start and end with an alphanumeric character (at most ${max} characters)`,
    });
  }
  try {
    new MODELS[kind](object as never).validate();
  } catch (error) {
    const errors = (error as { errors?: Array<{ instancePath?: string; message?: string; params?: unknown }> }).errors;
    if (!errors) throw error;
    for (const e of errors) {
      const field = (e.instancePath ?? '').split('/').filter(Boolean).join('.') || '<root>';
      causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${e.message ?? 'invalid'}` });
    }
  }
  return causes;
}
