import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryPodLogStore } from '../logs.js';
import { startKubeApiServer, writeKubeconfig, type KubeApiServer } from './index.js';
import { MemoryObjectStore } from '../store.js';
import type { KubeObject } from '../types.js';

// Real kubectl against the twin's API server: discovery, Tables, client-side apply (strategic merge patch for
// built-in kinds, JSON merge patch for custom resources), scale, logs, delete, and RBAC refusals.

const KUBECTL = process.env.KUBECTL ?? 'kubectl';
/** The gcloud SDK's kubectl is a dispatcher that runs the client matching the server (1.30 here); 1.32 is beside it. */
const GCLOUD_KUBECTL_132 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.32';
const BINARIES = [KUBECTL, ...(existsSync(GCLOUD_KUBECTL_132) ? [GCLOUD_KUBECTL_132] : [])];

beforeAll(() => {
  const probe = spawnSync(KUBECTL, ['version', '--client'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `kubectl is needed for this test and was not found as "${KUBECTL}": install kubectl 1.30-1.32 ` +
        `(e.g. apt-get install kubectl) or set KUBECTL to its path`,
    );
  }
});

const ADMIN = 'twin-admin-token';
const READ_ONLY = 'twin-read-only-token';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A setup the tests share per kubectl binary: server, store, logs, kubeconfigs. */
interface Cluster {
  server: KubeApiServer;
  store: MemoryObjectStore;
  logs: MemoryPodLogStore;
  dir: string;
  kubectl(args: string[], options?: { readOnly?: boolean; stdin?: string }): Promise<Run>;
}

function deploymentYaml(name: string, image: string, replicas = 1): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    `  name: ${name}`,
    '  namespace: default',
    `  labels: {app: ${name}}`,
    'spec:',
    `  replicas: ${replicas}`,
    '  selector:',
    `    matchLabels: {app: ${name}}`,
    '  template:',
    '    metadata:',
    `      labels: {app: ${name}}`,
    '    spec:',
    '      containers:',
    '        - name: vllm',
    `          image: ${image}`,
    '          args: ["--max-num-seqs", "256"]',
    '          ports:',
    '            - containerPort: 8000',
    '',
  ].join('\n');
}

/** The parts of KEDA's CRDs the server reads: names, version, printer columns (from keda's scaledobjects CRD). */
function kedaCrds(): KubeObject[] {
  const column = (name: string, jsonPath: string, type = 'string') => ({ name, jsonPath, type });
  return [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'scaledobjects.keda.sh' },
      spec: {
        group: 'keda.sh',
        names: {
          kind: 'ScaledObject',
          listKind: 'ScaledObjectList',
          plural: 'scaledobjects',
          singular: 'scaledobject',
          shortNames: ['so'],
        },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            additionalPrinterColumns: [
              column('ScaleTargetKind', '.status.scaleTargetKind'),
              column('ScaleTargetName', '.spec.scaleTargetRef.name'),
              column('Min', '.spec.minReplicaCount', 'integer'),
              column('Max', '.spec.maxReplicaCount', 'integer'),
              column('Ready', '.status.conditions[?(@.type=="Ready")].status'),
              column('Active', '.status.conditions[?(@.type=="Active")].status'),
              column('Fallback', '.status.conditions[?(@.type=="Fallback")].status'),
              column('Paused', '.status.conditions[?(@.type=="Paused")].status'),
              column('Triggers', '.status.triggersTypes'),
              column('Authentications', '.status.authenticationsTypes'),
              column('Age', '.metadata.creationTimestamp', 'date'),
            ],
          },
        ],
      },
    },
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'triggerauthentications.keda.sh' },
      spec: {
        group: 'keda.sh',
        names: { kind: 'TriggerAuthentication', plural: 'triggerauthentications', singular: 'triggerauthentication' },
        scope: 'Namespaced',
        versions: [{ name: 'v1alpha1', served: true, storage: true }],
      },
    },
  ];
}

/** A vLLM Deployment with a ready Pod and its log, a Service, a finished k6 Job, a ScaledObject and KEDA's HPA. */
function seed(store: MemoryObjectStore, logs: MemoryPodLogStore): void {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  for (const crd of kedaCrds()) store.create(crd);
  const owner = store.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'vllm-inference-app', namespace: 'default', labels: { app: 'vllm-inference-app' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'vllm-inference-app' } },
      template: {
        metadata: { labels: { app: 'vllm-inference-app' } },
        spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0' }] },
      },
    },
  });
  store.update(
    { ...owner, status: { replicas: 1, readyReplicas: 1, updatedReplicas: 1, availableReplicas: 1 } },
    { subresource: 'status' },
  );
  const pod = store.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'vllm-inference-app-7d9c8b6f5d-x2k4q',
      namespace: 'default',
      labels: { app: 'vllm-inference-app' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vllm-inference-app', uid: owner.metadata.uid as string },
      ],
    },
    spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0' }] },
  });
  store.update(
    {
      ...pod,
      status: {
        phase: 'Running',
        podIP: '10.0.1.17',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          {
            name: 'vllm',
            image: 'vllm/vllm-openai:v0.11.0',
            imageID:
              'docker.io/vllm/vllm-openai@sha256:0000000000000000000000000000000000000000000000000000000000000000',
            ready: true,
            restartCount: 0,
            state: { running: { startedAt: now } },
          },
        ],
      },
    },
    { subresource: 'status' },
  );
  logs.append('default', pod.metadata.name, 'INFO:     Started server process [1]');
  logs.append('default', pod.metadata.name, 'INFO:     Application startup complete.');
  store.create({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'vllm-inference-svc', namespace: 'default' },
    spec: {
      clusterIP: '10.100.12.34',
      ports: [{ port: 8000, protocol: 'TCP' }],
      selector: { app: 'vllm-inference-app' },
    },
  });
  const job = store.create({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'k6-rate-10', namespace: 'default' },
    spec: {
      completions: 1,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'k6', image: 'grafana/k6:latest' }] } },
    },
  });
  store.update(
    {
      ...job,
      status: { succeeded: 1, startTime: now, completionTime: now, conditions: [{ type: 'Complete', status: 'True' }] },
    },
    { subresource: 'status' },
  );
  const so = store.create({
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name: 'vllm-inference-app', namespace: 'default' },
    spec: {
      scaleTargetRef: { name: 'vllm-inference-app' },
      minReplicaCount: 1,
      maxReplicaCount: 5,
      triggers: [
        {
          type: 'prometheus',
          metricType: 'AverageValue',
          metadata: {
            serverAddress: 'http://prometheus:9090',
            query: 'sum(vllm:num_requests_waiting) or vector(0)',
            threshold: '25',
          },
        },
      ],
    },
  });
  store.update(
    {
      ...so,
      status: {
        scaleTargetKind: 'apps/v1.Deployment',
        triggersTypes: 'prometheus',
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'Active', status: 'False' },
          { type: 'Fallback', status: 'False' },
          { type: 'Paused', status: 'Unknown' },
        ],
      },
    },
    { subresource: 'status' },
  );
  const external = (name: string, averageValue: string) => ({
    type: 'External',
    external: { metric: { name }, target: { type: 'AverageValue', averageValue } },
  });
  const hpa = store.create({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'keda-hpa-vllm-inference-app', namespace: 'default' },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vllm-inference-app' },
      minReplicas: 1,
      maxReplicas: 5,
      metrics: [external('s0-prometheus', '25'), external('s1-prometheus', '5')],
    },
  });
  store.update(
    {
      ...hpa,
      status: {
        currentReplicas: 1,
        desiredReplicas: 1,
        currentMetrics: [
          { type: 'External', external: { metric: { name: 's0-prometheus' }, current: { averageValue: '0' } } },
          { type: 'External', external: { metric: { name: 's1-prometheus' }, current: { averageValue: '0' } } },
        ],
      },
    },
    { subresource: 'status' },
  );
}

async function startCluster(binary: string): Promise<Cluster> {
  const store = new MemoryObjectStore();
  const logs = new MemoryPodLogStore();
  seed(store, logs);
  const server = await startKubeApiServer({
    store,
    logs,
    clusterName: 'vllm-demo',
    region: 'us-east-2',
    tokens: { admin: [ADMIN], readOnly: [READ_ONLY] },
  });
  const dir = await mkdtemp(join(tmpdir(), 'kube-apiserver-test-'));
  // kubectl sends a kubeconfig's token only to https servers: kubeconfigs name the TLS URL.
  const admin = await writeKubeconfig(join(dir, 'admin.kubeconfig'), {
    server: server.httpsUrl,
    clusterName: 'vllm-demo',
    token: ADMIN,
  });
  const readOnly = await writeKubeconfig(join(dir, 'read-only.kubeconfig'), {
    server: server.httpsUrl,
    clusterName: 'vllm-demo',
    token: READ_ONLY,
    user: 'viewer',
  });
  return {
    server,
    store,
    logs,
    dir,
    kubectl: (args, options = {}) =>
      new Promise<Run>((resolve) => {
        const child = execFile(
          binary,
          [...args, '--kubeconfig', options.readOnly ? readOnly : admin, '--cache-dir', join(dir, 'cache')],
          { encoding: 'utf8', env: { ...process.env, KUBECONFIG: '' } },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
            resolve({ code, stdout, stderr });
          },
        );
        if (options.stdin !== undefined) child.stdin?.end(options.stdin);
      }),
  };
}

/** The header line of each table kubectl printed, with runs of spaces collapsed. */
function headers(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('NAMESPACE ') || line.startsWith('NAME '))
    .map((line) => line.trim().replace(/\s{2,}/g, ' '));
}

function rowOf(stdout: string, name: string): string[] {
  const line = stdout.split('\n').find((l) => l.includes(name)) ?? '';
  return line.trim().split(/\s{2,}/);
}

describe.each(BINARIES)('Kubernetes API server twin with %s', (binary) => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster(binary);
  });

  afterAll(async () => {
    await cluster?.server.stop();
    if (cluster) await rm(cluster.dir, { recursive: true, force: true });
  });

  it('prints deployments, pods, services and jobs of all namespaces with kubectl columns', async () => {
    // Act
    const run = await cluster.kubectl(['get', 'deployments,pods,services,jobs', '-A']);

    // Assess
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(headers(run.stdout)).toEqual([
      'NAMESPACE NAME READY UP-TO-DATE AVAILABLE AGE',
      'NAMESPACE NAME READY STATUS RESTARTS AGE',
      'NAMESPACE NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE',
      'NAMESPACE NAME STATUS COMPLETIONS DURATION AGE',
    ]);
    expect(rowOf(run.stdout, 'deployment.apps/vllm-inference-app').slice(0, 5)).toEqual([
      'default',
      'deployment.apps/vllm-inference-app',
      '1/1',
      '1',
      '1',
    ]);
    expect(rowOf(run.stdout, 'pod/vllm-inference-app').slice(2, 5)).toEqual(['1/1', 'Running', '0']);
    expect(rowOf(run.stdout, 'service/vllm-inference-svc').slice(2, 6)).toEqual([
      'ClusterIP',
      '10.100.12.34',
      '<none>',
      '8000/TCP',
    ]);
    expect(rowOf(run.stdout, 'job.batch/k6-rate-10').slice(2, 4)).toEqual(['Complete', '1/1']);
  });

  it("prints ScaledObjects with KEDA's columns and the HPA with its TARGETS", async () => {
    // Act
    const run = await cluster.kubectl(['get', 'scaledobjects,hpa', '-A']);

    // Assess
    expect(run.code).toBe(0);
    expect(headers(run.stdout)).toEqual([
      'NAMESPACE NAME SCALETARGETKIND SCALETARGETNAME MIN MAX READY ACTIVE FALLBACK PAUSED TRIGGERS AUTHENTICATIONS AGE',
      'NAMESPACE NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE',
    ]);
    expect(rowOf(run.stdout, 'scaledobject.keda.sh/').slice(2, 11)).toEqual([
      'apps/v1.Deployment',
      'vllm-inference-app',
      '1',
      '5',
      'True',
      'False',
      'False',
      'Unknown',
      'prometheus',
    ]);
    expect(rowOf(run.stdout, 'horizontalpodautoscaler.autoscaling/').slice(2, 7)).toEqual([
      'Deployment/vllm-inference-app',
      '0/25 (avg), 0/5 (avg)',
      '1',
      '5',
      '1',
    ]);
  });

  it('applies a Deployment: created, then unchanged, then configured with a changed image', async () => {
    // Prepare
    const file = join(cluster.dir, 'web.yaml');
    await writeFile(file, deploymentYaml('web', 'vllm/vllm-openai:v0.9.2'));

    // Act
    const first = await cluster.kubectl(['apply', '-f', file]);
    const second = await cluster.kubectl(['apply', '-f', file]);
    await writeFile(file, deploymentYaml('web', 'vllm/vllm-openai:v0.11.0'));
    const third = await cluster.kubectl(['apply', '-f', file]);

    // Assess
    expect([first.stdout.trim(), second.stdout.trim(), third.stdout.trim()]).toEqual([
      'deployment.apps/web created',
      'deployment.apps/web unchanged',
      'deployment.apps/web configured',
    ]);
    const stored = cluster.store.get('Deployment', 'default', 'web');
    const containers = (stored?.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template
      .spec.containers;
    expect(containers).toEqual([
      expect.objectContaining({ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0', args: ['--max-num-seqs', '256'] }),
    ]);
    expect(stored?.metadata.generation).toBe(2);
    expect(stored?.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toContain('v0.11.0');
  });

  it('applies a change to a ScaledObject (a JSON merge patch: custom resources take no strategic merge)', async () => {
    // Prepare
    const applied = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'applied-so', namespace: 'default' },
      spec: {
        scaleTargetRef: { name: 'web' },
        maxReplicaCount: 5,
        triggers: [{ type: 'cpu', metadata: { value: '50' } }],
      },
    };

    // Act
    const created = await cluster.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(applied) });
    const changed = await cluster.kubectl(['apply', '-f', '-'], {
      stdin: JSON.stringify({ ...applied, spec: { ...applied.spec, maxReplicaCount: 8 } }),
    });

    // Assess
    expect(created.stdout.trim()).toBe('scaledobject.keda.sh/applied-so created');
    expect(changed.stdout.trim()).toBe('scaledobject.keda.sh/applied-so configured');
    expect(
      (cluster.store.get('ScaledObject', 'default', 'applied-so')?.spec as { maxReplicaCount: number }).maxReplicaCount,
    ).toBe(8);
  });

  it('scales a Deployment through its scale subresource', async () => {
    // Prepare
    await cluster.kubectl(['apply', '-f', '-'], { stdin: deploymentYaml('to-scale', 'vllm/vllm-openai:v0.11.0') });

    // Act
    const run = await cluster.kubectl(['scale', 'deployment', 'to-scale', '--replicas', '3']);

    // Assess
    expect(run.stdout.trim()).toBe('deployment.apps/to-scale scaled');
    expect((cluster.store.get('Deployment', 'default', 'to-scale')?.spec as { replicas: number }).replicas).toBe(3);
  });

  it('prints a Pod log, and the last line with --tail', async () => {
    // Act
    const all = await cluster.kubectl(['logs', 'vllm-inference-app-7d9c8b6f5d-x2k4q']);
    const tail = await cluster.kubectl(['logs', 'vllm-inference-app-7d9c8b6f5d-x2k4q', '--tail', '1']);

    // Assess
    expect(all.code).toBe(0);
    expect(all.stdout).toBe('INFO:     Started server process [1]\nINFO:     Application startup complete.\n');
    expect(tail.stdout).toBe('INFO:     Application startup complete.\n');
  });

  it('deletes a Deployment and, with it, the Pods it owns', async () => {
    // Prepare
    const owner = cluster.store.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'doomed', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'doomed' } },
        template: { metadata: { labels: { app: 'doomed' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    cluster.store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'doomed-1',
        namespace: 'default',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'doomed', uid: owner.metadata.uid as string },
        ],
      },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });

    // Act
    const run = await cluster.kubectl(['delete', 'deployment', 'doomed']);

    // Assess
    expect(run.stdout.trim()).toBe('deployment.apps "doomed" deleted');
    expect(run.code).toBe(0);
    expect(cluster.store.get('Deployment', 'default', 'doomed')).toBeUndefined();
    expect(cluster.store.get('Pod', 'default', 'doomed-1')).toBeUndefined();
  });

  it('lets a read-only kubeconfig get but not delete (forbidden)', async () => {
    // Act
    const get = await cluster.kubectl(['get', 'deployment', 'vllm-inference-app'], { readOnly: true });
    const del = await cluster.kubectl(['delete', 'deployment', 'vllm-inference-app'], { readOnly: true });

    // Assess
    expect(get.code).toBe(0);
    expect(del.code).not.toBe(0);
    expect(del.stderr).toContain('forbidden');
    expect(del.stderr).toContain('User "twin-read-only" cannot delete resource "deployments" in API group "apps"');
    expect(cluster.store.get('Deployment', 'default', 'vllm-inference-app')).toBeDefined();
  });

  it('refuses a kubeconfig with an unknown token (You must be logged in)', async () => {
    // Prepare
    const path = await writeKubeconfig(join(cluster.dir, 'stranger.kubeconfig'), {
      server: cluster.server.httpsUrl,
      clusterName: 'vllm-demo',
      token: 'not-a-token',
    });

    // Act
    const run = await new Promise<Run>((resolve) => {
      execFile(
        binary,
        ['get', 'pods', '--kubeconfig', path, '--cache-dir', join(cluster.dir, 'cache-stranger')],
        (e, stdout, stderr) => resolve({ code: e ? 1 : 0, stdout, stderr }),
      );
    });

    // Assess
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('You must be logged in to the server');
  });
});
