import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { EKSClient } from '@aws-sdk/client-eks';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEDA_KINDS, scaledObject } from '../shared/keda/index.js';
import { type ClusterClient, KINDS, KubeForbiddenError, type KubeObject } from '../shared/kube/index.js';
import { connectToEks } from '../shared/kube/connection/index.js';
import { controlPlaneRbac } from '../shared/kube/manifests/index.js';
import { CHECK_IDS, type CheckId, type CheckStatus, type PreflightReport } from '../shared/preflight/index.js';
import {
  calibrateOnTwin,
  checkTwinDrift,
  credentialsOf,
  type Twin,
  TWIN_CLUSTER,
  TWIN_CREDENTIALS,
  TWIN_IDENTITIES,
  TWIN_REGION,
  type TwinIdentity,
  twinPreflight,
} from '../sim/harness/index.js';
import { FAST_TWIN_CALIBRATION, startDemoTwin } from './helpers/twin.js';

// Kubernetes access per function (issue 18, item 2) on the twin: its API server evaluates the product's generated
// RBAC (applied at start-up for the target's namespace) for the identity each EKS access entry maps a function's role
// to. Everything goes through the product's own EKS connection (DescribeCluster, an EKS token signed with the
// function's keys, @kubernetes/client-node), as on AWS.

jest.setTimeout(300_000);

let twin: Twin;
let scratch: string;
const connections: EKSClient[] = [];

/** The product's cluster client signed with `identity`'s keys, as the function with that role connects. */
async function clusterAs(identity: TwinIdentity): Promise<ClusterClient> {
  const credentials = credentialsOf(identity);
  const eks = new EKSClient({ region: TWIN_REGION, endpoint: twin.state.aws.eksEndpoint, credentials });
  connections.push(eks);
  return connectToEks({ clusterName: TWIN_CLUSTER, region: TWIN_REGION, eks, credentials });
}

/** The Kubernetes user EKS makes of a role session: the access entry's default username, the session filled in. */
function userOf(identity: TwinIdentity): string {
  const role = identity.roleArn.split('/').at(-1) ?? '';
  return `arn:aws:sts::000000000000:assumed-role/${role}/${identity.accessKeyId}`;
}

async function refusal(attempt: Promise<unknown>): Promise<KubeForbiddenError> {
  const error = await attempt.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof KubeForbiddenError)) throw new Error(`expected a 403, got ${String(error)}`);
  return error;
}

function configMap(namespace: string, name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { script: 'k6' } };
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'vllm-pilot-rbac-'));
  twin = await startDemoTwin();
  // The guide's ScaledObject, applied by the operator, for calibration to write its thresholds into.
  await twin.cluster.apply(
    scaledObject({
      name: twin.state.deployment,
      namespace: twin.state.namespace,
      model: twin.state.model,
      ampWorkspaceUrl: twin.state.prometheusUrl,
      authentication: false,
    }),
  );
  // A namespace that is not the calibration's target.
  await twin.cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } });
}, 240_000);

afterAll(async () => {
  for (const eks of connections) eks.destroy();
  await twin?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('The preflight function (Kubernetes group vllm-eks-pilot-read)', () => {
  it("is refused a write with Kubernetes' Forbidden message, and the Deployment stays as it was", async () => {
    // Prepare
    const cluster = await clusterAs(TWIN_IDENTITIES.preflight);
    const { namespace, deployment } = twin.state;
    const ref = { ...KINDS.deployment, namespace, name: deployment };

    // Act
    const patch = await refusal(cluster.patchMerge(ref, { metadata: { annotations: { touched: 'yes' } } }));
    const scale = await refusal(cluster.scale({ namespace, name: deployment }, 3));

    // Assess
    expect(patch.serverMessage).toBe(
      `deployments.apps "${deployment}" is forbidden: User "${userOf(TWIN_IDENTITIES.preflight)}" cannot patch ` +
        `resource "deployments" in API group "apps" in the namespace "${namespace}"`,
    );
    expect(scale.serverMessage).toBe(
      `deployments.apps "${deployment}" is forbidden: User "${userOf(TWIN_IDENTITIES.preflight)}" cannot patch ` +
        `resource "deployments/scale" in API group "apps" in the namespace "${namespace}"`,
    );
    const live = await twin.cluster.get(ref);
    expect(live?.metadata.annotations?.touched).toBeUndefined();
    expect((live?.spec as { replicas?: number }).replicas).toBe(twin.profile.replicas);
  });

  it('reads what its checks read: the preflight Lambda with its own identity reports exactly what the admin sees', async () => {
    // Prepare: the same Lambda as the operator (cluster admin) first, for the reference
    const statuses = (report: PreflightReport | undefined): Record<CheckId, CheckStatus> =>
      Object.fromEntries((report?.results ?? []).map((r) => [r.id, r.status])) as Record<CheckId, CheckStatus>;
    const asAdmin = await twinPreflight(twin.state, { credentials: TWIN_CREDENTIALS })();

    // Act: the preflight Lambda as the twin runs it, with its own identity
    const asPreflight = await twinPreflight(twin.state)();

    // Assess
    const [report] = asPreflight.reports;
    expect(report?.results.filter((r) => /forbidden|cannot (get|list)/i.test(r.reason))).toEqual([]);
    expect(statuses(report)).toEqual(statuses(asAdmin.reports[0]));
    // The checks answered from the cluster: the target's Deployment, Pods and their /metrics, the ServiceMonitor,
    // the DCGM DaemonSet, the dashboard ConfigMaps, the ScaledObject and the CRDs.
    expect(statuses(report)).toMatchObject({
      [CHECK_IDS.vllmMetricsExposed]: 'pass',
      [CHECK_IDS.serviceMonitorScraping]: 'pass',
      [CHECK_IDS.dcgmExporter]: 'pass',
      [CHECK_IDS.grafanaDashboards]: 'pass',
      [CHECK_IDS.kedaScaledObject]: 'pass',
      [CHECK_IDS.karpenterDoNotDisrupt]: 'pass',
      [CHECK_IDS.gpuMemorySettings]: 'pass',
    });
  });
});

describe('The calibration functions (Kubernetes group vllm-eks-pilot-calibration)', () => {
  it("write in their target's namespace, and are refused (403) in any other", async () => {
    // Prepare
    const cluster = await clusterAs(TWIN_IDENTITIES.calibration);
    const { namespace } = twin.state;

    // Act
    const created = await cluster.apply(configMap(namespace, 'k6-script-rbac'));
    const deleted = await cluster.delete({ ...KINDS.configMap, namespace, name: 'k6-script-rbac' });
    const outside = await refusal(cluster.apply(configMap('team-b', 'k6-script-rbac')));
    const patchOutside = await refusal(
      cluster.patchMerge({ ...KINDS.deployment, namespace: 'team-b', name: 'other' }, { metadata: { labels: {} } }),
    );

    // Assess
    expect(created.action).toBe('created');
    expect(deleted).toBe(true);
    const user = userOf(TWIN_IDENTITIES.calibration);
    expect(outside.serverMessage).toBe(
      `configmaps "k6-script-rbac" is forbidden: User "${user}" cannot get resource "configmaps" in API group "" ` +
        'in the namespace "team-b"',
    );
    expect(patchOutside.serverMessage).toBe(
      `deployments.apps "other" is forbidden: User "${user}" cannot patch resource "deployments" in API group "apps" ` +
        'in the namespace "team-b"',
    );
  });

  it('may write in a namespace once `render rbac --set namespaces=...` has bound it there', async () => {
    // Prepare: the operator applies the calibration Role and RoleBinding rendered for team-b
    const cluster = await clusterAs(TWIN_IDENTITIES.calibration);
    for (const object of controlPlaneRbac({ namespaces: ['team-b'] }).filter((o) => o.metadata.namespace === 'team-b'))
      await twin.cluster.apply(object);

    // Act
    const created = await cluster.apply(configMap('team-b', 'k6-script-rbac'));

    // Assess
    expect(created.action).toBe('created');
    expect(await twin.cluster.get({ ...KINDS.configMap, namespace: 'team-b', name: 'k6-script-rbac' })).toBeDefined();
  });

  it('run a whole calibration with only their RBAC, thresholds written; the drift detector then reads with its own', async () => {
    // Act
    const { report } = await calibrateOnTwin(twin.state, {
      input: { ...FAST_TWIN_CALIBRATION, scaledObject: { apply: true } },
      executionName: 'calib-rbac',
      reportsDir: scratch,
      waitScale: 0.25,
      retryIntervalMs: 10,
      credentials: credentialsOf(TWIN_IDENTITIES.calibration),
    });
    // The drift detector as the twin runs it, with its own (read-only) identity.
    const drift = await checkTwinDrift(twin.state, { windowSeconds: 15 });

    // Assess
    expect(report.change).toMatchObject({ applied: true });
    const live = await twin.cluster.get({
      ...KEDA_KINDS.scaledObject,
      namespace: twin.state.namespace,
      name: twin.state.deployment,
    });
    const thresholds = ((live?.spec as { triggers?: Array<{ metadata?: { threshold?: string } }> }).triggers ?? []).map(
      (trigger) => trigger.metadata?.threshold,
    );
    expect(thresholds).toContain(report.change?.next.queueDepthPerPod);
    expect(drift.target).toBe(`twin-${twin.state.profile}`);
  });
});
