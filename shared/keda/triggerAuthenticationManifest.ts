import type { ITriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import * as z from 'zod';
import type { KubeObject } from '../kube/index.js';
import { dns1123Label, MANAGED_BY, parseInput } from '../kube/manifests/index.js';

/** The KEDA docs' name for the AMP example's TriggerAuthentication. */
export const DEFAULT_TRIGGER_AUTHENTICATION_NAME = 'keda-trigger-auth-aws-credentials';

const ROLE_ARN = /^arn:aws(-[a-z]+)*:iam::\d{12}:role\/[\w+=,.@/-]+$/;

export const ampTriggerAuthenticationInputSchema = z
  .strictObject({
    name: dns1123Label('the TriggerAuthentication name').default(DEFAULT_TRIGGER_AUTHENTICATION_NAME),
    namespace: dns1123Label('the namespace of the ScaledObject').default('default'),
    /** A role KEDA assumes to query AMP; without it KEDA uses its operator's own identity (IRSA / Pod Identity). */
    roleArn: z
      .string()
      .regex(ROLE_ARN, {
        error: (issue) => `${JSON.stringify(issue.input)} is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)`,
      })
      .optional(),
    /** `keda` (the operator's identity) or `workload` (the scaled Deployment's); mutually exclusive with roleArn. */
    identityOwner: z.enum(['keda', 'workload']).optional(),
  })
  .refine((input) => input.roleArn === undefined || input.identityOwner === undefined, {
    path: ['identityOwner'],
    error: 'cannot be set together with roleArn (KEDA treats them as mutually exclusive)',
  });

export type AmpTriggerAuthenticationInputSpec = z.input<typeof ampTriggerAuthenticationInputSchema>;

/**
 * The TriggerAuthentication that lets KEDA's Prometheus scaler SigV4-sign its AMP queries (service `aps`):
 * `podIdentity.provider: aws`, the KEDA docs' AMP example. No keys are stored in the cluster.
 */
export function ampTriggerAuthentication(spec: AmpTriggerAuthenticationInputSpec = {}): KubeObject {
  const input = parseInput(ampTriggerAuthenticationInputSchema, spec, 'triggerauth');
  const auth: ITriggerAuthentication = {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'TriggerAuthentication',
    metadata: { name: input.name, namespace: input.namespace, labels: { ...MANAGED_BY } },
    spec: {
      podIdentity: {
        provider: 'aws',
        ...(input.roleArn === undefined ? {} : { roleArn: input.roleArn }),
        ...(input.identityOwner === undefined ? {} : { identityOwner: input.identityOwner }),
      },
    },
  };
  return auth as KubeObject;
}
