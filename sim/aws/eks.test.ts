import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CreateAccessEntryCommand,
  DescribeAccessEntryCommand,
  DescribeClusterCommand,
  EKSClient,
  ListAccessEntriesCommand,
} from '@aws-sdk/client-eks';
import { VirtualClock } from '../../shared/clock/index.js';
import { KubeClusterNotFoundError } from '../../shared/kube/index.js';
import { connectToEks, parseEksToken } from '../../shared/kube/connection/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../shared/kube/testing/fakeApiServer.js';
import { EksAccessEntries } from '../kube/server/accessEntries.js';
import { startEksTwin, type EksTwin } from './eks.js';

const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'twin-secret' };

function eksClient(twin: EksTwin, region: string): EKSClient {
  return new EKSClient({ region, endpoint: twin.endpoint, credentials, maxAttempts: 1 });
}

describe('Function: startEksTwin', () => {
  let twin: EksTwin;
  let client: EKSClient;

  beforeAll(async () => {
    twin = await startEksTwin({
      clusters: [{ name: 'ai-eks-docs', endpoint: 'http://127.0.0.1:6443', region: 'us-east-2' }],
      clock: new VirtualClock(Date.parse('2025-06-01T12:00:00Z')),
    });
    client = eksClient(twin, 'us-east-2');
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  it('answers DescribeCluster as the real SDK parses it', async () => {
    // Act
    const { cluster } = await client.send(new DescribeClusterCommand({ name: 'ai-eks-docs' }));

    // Assess
    expect(cluster).toMatchObject({
      name: 'ai-eks-docs',
      arn: 'arn:aws:eks:us-east-2:123456789012:cluster/ai-eks-docs',
      endpoint: 'http://127.0.0.1:6443',
      status: 'ACTIVE',
      version: '1.30',
      certificateAuthority: { data: '' },
      createdAt: new Date('2025-06-01T12:00:00Z'),
    });
  });

  it.each([
    { case: 'an unknown name', region: 'us-east-2', name: 'nope' },
    { case: 'a known name in another region', region: 'eu-west-1', name: 'ai-eks-docs' },
  ])('answers ResourceNotFoundException for $case', async ({ region, name }) => {
    // Prepare
    const other = eksClient(twin, region);

    // Act
    const error = (await other.send(new DescribeClusterCommand({ name })).catch((e: unknown) => e)) as Error & {
      $metadata: { httpStatusCode: number };
    };
    other.destroy();

    // Assess
    expect(error.name).toBe('ResourceNotFoundException');
    expect(error.$metadata.httpStatusCode).toBe(404);
    expect(error.message).toBe(`No cluster found for name: ${name}.`);
  });

  it('refuses a request without an Authorization header', async () => {
    // Act
    const response = await fetch(`${twin.endpoint}/clusters/ai-eks-docs`);

    // Assess
    expect(response.status).toBe(403);
    expect(response.headers.get('x-amzn-errortype')).toBe('MissingAuthenticationTokenException');
  });
});

describe('Function: connectToEks (through the EKS twin)', () => {
  let api: FakeApiServer;
  let twin: EksTwin;
  const tokens: string[] = [];

  beforeAll(async () => {
    api = await startFakeApiServer({
      acceptToken: (token) => {
        tokens.push(token);
        try {
          return parseEksToken(token).region === 'us-east-2';
        } catch {
          return false;
        }
      },
    });
    twin = await startEksTwin({ clusters: [{ name: 'ai-eks-docs', endpoint: api.url, region: 'us-east-2' }] });
  });

  afterAll(async () => {
    await twin.stop();
    await api.stop();
  });

  it('finds the API server with DescribeCluster and calls it with an EKS bearer token', async () => {
    // Prepare
    const eks = eksClient(twin, 'us-east-2');
    api.objects.set('/api/v1/namespaces/default/configmaps/probe', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'probe', namespace: 'default' },
      data: { hello: 'world' },
    });

    // Act
    const cluster = await connectToEks({ clusterName: 'ai-eks-docs', region: 'us-east-2', eks, credentials });
    const configMap = await cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'probe' });
    eks.destroy();

    // Assess
    expect(configMap?.data).toEqual({ hello: 'world' });
    expect(tokens.at(-1)).toMatch(/^k8s-aws-v1\./);
    expect(parseEksToken(tokens.at(-1) ?? '').accessKeyId).toBe('AKIAIOSFODNN7EXAMPLE');
  });

  it('describes a cluster once per EKS client', async () => {
    // Prepare
    const eks = eksClient(twin, 'us-east-2');
    const before = twin.describeCount();

    // Act
    await connectToEks({ clusterName: 'ai-eks-docs', region: 'us-east-2', eks, credentials });
    await connectToEks({ clusterName: 'ai-eks-docs', region: 'us-east-2', eks, credentials });
    eks.destroy();

    // Assess
    expect(twin.describeCount() - before).toBe(1);
  });

  it('fails with KubeClusterNotFoundError for a cluster EKS does not know', async () => {
    // Prepare
    const eks = eksClient(twin, 'us-east-2');

    // Act
    const error = await connectToEks({ clusterName: 'missing', region: 'us-east-2', eks, credentials }).catch(
      (e: unknown) => e,
    );
    eks.destroy();

    // Assess
    expect(error).toBeInstanceOf(KubeClusterNotFoundError);
    expect((error as Error).message).toBe('EKS cluster missing was not found in us-east-2 (eks:DescribeCluster)');
  });
});

describe('Function: startEksTwin (access entries)', () => {
  const ROLE = 'arn:aws:iam::000000000000:role/vllm-eks-pilot-preflight';
  let twin: EksTwin;
  let client: EKSClient;
  let entries: EksAccessEntries;

  beforeAll(async () => {
    entries = new EksAccessEntries();
    twin = await startEksTwin({
      clusters: [
        { name: 'ai-eks-docs', endpoint: 'http://127.0.0.1:6443', region: 'us-east-2', accessEntries: entries },
      ],
    });
    client = eksClient(twin, 'us-east-2');
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  it('creates an entry with CreateAccessEntry, which the API server then finds, and describes and lists it', async () => {
    // Act
    const created = await client.send(
      new CreateAccessEntryCommand({
        clusterName: 'ai-eks-docs',
        principalArn: ROLE,
        kubernetesGroups: ['vllm-eks-pilot-read'],
      }),
    );
    const described = await client.send(
      new DescribeAccessEntryCommand({ clusterName: 'ai-eks-docs', principalArn: ROLE }),
    );
    const listed = await client.send(new ListAccessEntriesCommand({ clusterName: 'ai-eks-docs' }));

    // Assess
    expect(created.accessEntry).toMatchObject({
      principalArn: ROLE,
      kubernetesGroups: ['vllm-eks-pilot-read'],
      username: 'arn:aws:sts::000000000000:assumed-role/vllm-eks-pilot-preflight/{{SessionName}}',
      type: 'STANDARD',
    });
    expect(described.accessEntry).toEqual(created.accessEntry);
    expect(listed.accessEntries).toEqual([ROLE]);
    expect(entries.describe(ROLE)?.kubernetesGroups).toEqual(['vllm-eks-pilot-read']);
  });

  it.each([
    {
      case: 'a group in the system: namespace',
      input: { principalArn: 'arn:aws:iam::000000000000:role/other', kubernetesGroups: ['system:masters'] },
      name: 'InvalidParameterException',
    },
    { case: 'a second entry for a principal', input: { principalArn: ROLE }, name: 'ResourceInUseException' },
  ])('refuses $case with $name, as EKS does', async ({ input, name }) => {
    // Act
    const error = await client
      .send(new CreateAccessEntryCommand({ clusterName: 'ai-eks-docs', ...input }))
      .catch((e: unknown) => e);

    // Assess
    expect(error).toMatchObject({ name });
  });
});
