import { describe, expect, it } from '@jest/globals';
import { KubeApiUnauthorizedError } from '../errors.js';
import { EksAccessEntries } from './accessEntries.js';
import { authenticate } from './auth.js';
import { EXAMPLE_CREDENTIALS, makeEksToken } from './testSupport.js';

const ROLE = 'arn:aws:iam::000000000000:role/vllm-eks-pilot-preflight';
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

function entries(): EksAccessEntries {
  const access = new EksAccessEntries();
  access.create({ principalArn: ROLE, kubernetesGroups: ['vllm-eks-pilot-read'] });
  access.assumeRole(EXAMPLE_CREDENTIALS.accessKeyId, ROLE);
  return access;
}

describe('Class: EksAccessEntries', () => {
  describe('Method: create', () => {
    it.each([
      { case: 'a principal that is not an IAM role ARN', input: { principalArn: 'preflight' }, field: 'principalArn' },
      {
        case: 'a group in the system: namespace',
        input: { principalArn: ROLE, kubernetesGroups: ['system:masters'] },
        field: 'kubernetesGroups',
      },
      { case: 'a username EKS reserves', input: { principalArn: ROLE, username: 'eks:admin' }, field: 'username' },
    ])('refuses $case, naming the field, as CreateAccessEntry does', ({ input, field }) => {
      // Act
      const act = () => new EksAccessEntries().create(input);

      // Assess
      expect(act).toThrow(expect.objectContaining({ name: 'EksAccessEntryInvalidError', field }));
    });

    it('refuses a second entry for the same principal', () => {
      // Act
      const act = () => entries().create({ principalArn: ROLE });

      // Assess
      expect(act).toThrow(/already exists/);
    });
  });

  describe('Method: resolve', () => {
    it("maps a session of the role to EKS's default username for a role, and the entry's groups", () => {
      // Act
      const resolved = entries().resolve({
        arn: `arn:aws:sts::000000000000:assumed-role/${EXAMPLE_CREDENTIALS.accessKeyId}`,
        accessKeyId: EXAMPLE_CREDENTIALS.accessKeyId,
        expiresAtMs: NOW,
      });

      // Assess
      expect(resolved).toEqual({
        username: `arn:aws:sts::000000000000:assumed-role/vllm-eks-pilot-preflight/${EXAMPLE_CREDENTIALS.accessKeyId}`,
        groups: ['vllm-eks-pilot-read'],
        clusterAdmin: false,
        principalArn: ROLE,
      });
    });
  });
});

describe('Function: authenticate (EKS tokens with access entries)', () => {
  it('gives the caller of an entry its username and groups, to be evaluated by RBAC', async () => {
    // Prepare
    const token = await makeEksToken({ clusterName: 'c', region: 'us-east-2', signedAtMs: NOW });

    // Act
    const user = authenticate(`Bearer ${token}`, { admin: [], readOnly: [] }, NOW, undefined, {
      entries: entries(),
      unmapped: 'refuse',
    });

    // Assess
    expect(user).toMatchObject({ access: 'rbac', groups: ['vllm-eks-pilot-read', 'system:authenticated'] });
  });

  it('refuses a caller without an entry with 401, as EKS does, when told to', async () => {
    // Prepare
    const token = await makeEksToken({ clusterName: 'c', region: 'us-east-2', signedAtMs: NOW });
    const reasons: string[] = [];

    // Act
    const act = () =>
      authenticate(`Bearer ${token}`, { admin: [], readOnly: [] }, NOW, (reason) => reasons.push(reason), {
        entries: new EksAccessEntries(),
        unmapped: 'refuse',
      });

    // Assess
    expect(act).toThrow(KubeApiUnauthorizedError);
    expect(reasons).toEqual([
      `no access entry maps arn:aws:sts::000000000000:assumed-role/${EXAMPLE_CREDENTIALS.accessKeyId}`,
    ]);
  });
});
