import { describe, expect, it } from '@jest/globals';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { KubeManifestInputError } from '../kube/index.js';
import { ampTriggerAuthentication } from './triggerAuthenticationManifest.js';

describe('Function: ampTriggerAuthentication', () => {
  it("uses KEDA's AWS pod identity, as the KEDA docs' AMP example does", () => {
    // Act
    const auth = ampTriggerAuthentication();

    // Assess
    new TriggerAuthentication(auth as never).validate();
    expect(auth).toMatchObject({
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'TriggerAuthentication',
      metadata: { name: 'keda-trigger-auth-aws-credentials', namespace: 'default' },
      spec: { podIdentity: { provider: 'aws' } },
    });
  });

  it.each([
    {
      case: 'a role to assume',
      input: { roleArn: 'arn:aws:iam::123456789012:role/keda-amp-query' },
      expected: { provider: 'aws', roleArn: 'arn:aws:iam::123456789012:role/keda-amp-query' },
    },
    {
      case: "the workload's identity",
      input: { identityOwner: 'workload' as const },
      expected: { provider: 'aws', identityOwner: 'workload' },
    },
  ])('takes $case', ({ input, expected }) => {
    // Act
    const auth = ampTriggerAuthentication(input);

    // Assess
    new TriggerAuthentication(auth as never).validate();
    expect(auth.spec).toEqual({ podIdentity: expected });
  });

  it.each([
    {
      case: 'roleArn with identityOwner',
      input: { roleArn: 'arn:aws:iam::123456789012:role/r', identityOwner: 'keda' as const },
      message: /identityOwner: cannot be set together with roleArn/,
    },
    {
      case: 'a roleArn that is not a role ARN',
      input: { roleArn: 'keda-role' },
      message: /roleArn: "keda-role" is not an IAM role ARN/,
    },
  ])('refuses $case', ({ input, message }) => {
    // Act
    const act = () => ampTriggerAuthentication(input);

    // Assess
    expect(act).toThrow(KubeManifestInputError);
    expect(act).toThrow(message);
  });
});
