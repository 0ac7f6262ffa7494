import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import type { KubeObject } from '../kube/index.js';
import { GITOPS_FILES, gitOpsFiles } from './gitops.js';
import { KEDA_PAUSED_REPLICAS_ANNOTATION } from './kinds.js';
import { scaledObject } from './scaledObjectManifest.js';

// The kustomize patch is checked with the real kustomize (kubectl's): the ScaledObject as a team keeps it in git,
// plus the generated patch through the generated kustomization entry, must build to the generated manifest's triggers.

const run = promisify(execFile);

describe('Function: gitOpsFiles', () => {
  let dir: string;
  const inGit = scaledObject({
    name: 'vllm-inference-app',
    namespace: 'default',
    model: 'mistralai/Ministral-3-8B-Instruct-2512',
    ampWorkspaceUrl: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1',
    authentication: true,
    region: 'us-east-2',
    // The guide's latency trigger, which the calibration sets to Value (ADR 0019).
    latencyMetricType: 'AverageValue',
  });
  // As the API server returns it: server fields, a status, and the calibration's own pause.
  const live = {
    ...structuredClone(inGit),
    metadata: {
      ...inGit.metadata,
      uid: 'c0ffee',
      resourceVersion: '4711',
      creationTimestamp: '2026-12-03T08:00:00Z',
      annotations: { [KEDA_PAUSED_REPLICAS_ANNOTATION]: '1', 'vllm-eks-pilot/paused-replicas-before': '' },
    },
    status: { conditions: [] },
  } as KubeObject;
  const values = {
    queueDepthPerPod: '3',
    queueActivation: '1',
    p95LatencySeconds: '1.6',
    p95LatencyMetricType: 'Value',
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vllm-pilot-gitops-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a manifest without server fields or the calibration pause, with the new thresholds', () => {
    // Act
    const manifest = parse(gitOpsFiles(live, values).manifest) as KubeObject & { status?: unknown };

    // Assess
    expect(manifest.status).toBeUndefined();
    expect(manifest.metadata).toEqual({ name: 'vllm-inference-app', namespace: 'default', ...pick(inGit.metadata) });
    const triggers = (manifest.spec as { triggers: Array<{ metricType: string; metadata: Record<string, string> }> })
      .triggers;
    expect(triggers.map((t) => [t.metadata.threshold, t.metadata.activationThreshold, t.metricType])).toEqual([
      ['3', '1', 'AverageValue'],
      ['1.6', undefined, 'Value'],
    ]);
  });

  it('gives a patch that kustomize applies to the ScaledObject in git, building the same triggers', async () => {
    // Prepare
    const files = gitOpsFiles(live, values);
    const entry = parse(files.kustomization) as { patches: unknown[] };
    await writeFile(join(dir, 'scaledobject.in-git.yaml'), stringify(inGit));
    await writeFile(join(dir, GITOPS_FILES.patch), files.patch);
    await writeFile(
      join(dir, 'kustomization.yaml'),
      stringify({ resources: ['scaledobject.in-git.yaml'], patches: entry.patches }),
    );

    // Act
    const built = parse((await run('kubectl', ['kustomize', dir])).stdout) as KubeObject;

    // Assess
    const manifest = parse(files.manifest) as KubeObject;
    expect(built.spec).toEqual(manifest.spec);
    expect(parse(files.patch)).toContainEqual({ op: 'add', path: '/spec/triggers/1/metricType', value: 'Value' });
  });
});

function pick(metadata: KubeObject['metadata']): Record<string, unknown> {
  const { name: _name, namespace: _namespace, ...rest } = metadata;
  return rest;
}
