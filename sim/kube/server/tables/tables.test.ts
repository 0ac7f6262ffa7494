import { describe, expect, it } from '@jest/globals';
import { RESOURCES } from '../../resources.js';
import type { KubeObject } from '../../types.js';
import { humanDuration } from './humanDuration.js';
import { evaluateJsonPath } from './jsonPath.js';
import { hpaTargets, selectorString } from './printers.js';
import { toTable } from './table.js';

const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);
const created = (agoMs: number) => new Date(NOW - agoMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('Function: humanDuration', () => {
  // Cases from k8s.io/apimachinery/pkg/util/duration TestHumanDuration.
  it.each([
    { case: 'seconds', ms: 45_000, want: '45s' },
    { case: 'under two minutes in seconds', ms: 119_000, want: '119s' },
    { case: 'minutes and seconds under ten minutes', ms: (3 * 60 + 12) * 1000, want: '3m12s' },
    { case: 'whole minutes', ms: 5 * 60_000, want: '5m' },
    { case: 'minutes up to three hours', ms: 170 * 60_000, want: '170m' },
    { case: 'hours and minutes under eight hours', ms: (5 * 60 + 3) * 60_000, want: '5h3m' },
    { case: 'hours under two days', ms: 30 * 3_600_000, want: '30h' },
    { case: 'days and hours under eight days', ms: (2 * 24 + 4) * 3_600_000, want: '2d4h' },
    { case: 'days', ms: 90 * 24 * 3_600_000, want: '90d' },
    { case: 'years and days', ms: (3 * 365 + 12) * 24 * 3_600_000, want: '3y12d' },
    { case: 'a little in the future', ms: -1500, want: '0s' },
    { case: 'far in the future', ms: -5000, want: '<invalid>' },
  ])('$case: $want', ({ ms, want }) => {
    // Act
    const text = humanDuration(ms);

    // Assess
    expect(text).toBe(want);
  });
});

describe('Function: evaluateJsonPath', () => {
  const object = {
    spec: { env: [{ name: 'A' }, { name: 'B' }] },
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Active', status: 'False' },
      ],
    },
  };

  it.each([
    { case: 'a field path', path: '.spec.env[0].name', want: ['A'] },
    { case: 'every element', path: '.spec.env[*].name', want: ['A', 'B'] },
    { case: 'a filter', path: '.status.conditions[?(@.type=="Active")].status', want: ['False'] },
    { case: 'a missing field', path: '.status.nothing', want: [] },
  ])('evaluates $case', ({ path, want }) => {
    // Act
    const values = evaluateJsonPath(path, object);

    // Assess
    expect(values).toEqual(want);
  });
});

describe('Function: hpaTargets', () => {
  it.each([
    {
      case: 'two External AverageValue metrics (KEDA)',
      specs: [
        { type: 'External', external: { target: { type: 'AverageValue', averageValue: '25' } } },
        { type: 'External', external: { target: { type: 'AverageValue', averageValue: '5' } } },
      ],
      statuses: [
        { type: 'External', external: { current: { averageValue: '0' } } },
        { type: 'External', external: { current: { averageValue: '0' } } },
      ],
      want: '0/25 (avg), 0/5 (avg)',
    },
    {
      case: 'no current values yet',
      specs: [{ type: 'External', external: { target: { type: 'AverageValue', averageValue: '25' } } }],
      statuses: undefined,
      want: '<unknown>/25 (avg)',
    },
    {
      case: 'a CPU utilisation metric',
      specs: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
      statuses: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 12 } } }],
      want: 'cpu: 12%/80%',
    },
    {
      case: 'more than two metrics',
      specs: [1, 2, 3].map((n) => ({ type: 'Pods', pods: { target: { averageValue: String(n) } } })),
      statuses: [],
      want: '<unknown>/1, <unknown>/2 + 1 more...',
    },
    { case: 'no metrics', specs: [], statuses: [], want: '<none>' },
  ])('formats $case', ({ specs, statuses, want }) => {
    // Act
    const text = hpaTargets(specs, statuses);

    // Assess
    expect(text).toBe(want);
  });
});

describe('Function: selectorString', () => {
  it('prints matchLabels and matchExpressions sorted by key, as kubectl -o wide shows them', () => {
    // Act
    const text = selectorString({
      matchLabels: { tier: 'gpu', app: 'vllm' },
      matchExpressions: [{ key: 'zone', operator: 'In', values: ['b', 'a'] }],
    });

    // Assess
    expect(text).toBe('app=vllm,tier=gpu,zone in (a,b)');
  });
});

describe('Function: toTable', () => {
  const cellsOf = (kind: keyof typeof RESOURCES, object: Partial<KubeObject>) => {
    const table = toTable(RESOURCES[kind], [{ apiVersion: 'v1', kind, metadata: { name: 'x' }, ...object }], {
      nowMs: NOW,
    });
    const names = table.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name);
    return Object.fromEntries(names.map((n, i) => [n, table.rows[0]?.cells[i]]));
  };

  it.each([
    {
      case: 'a running, ready Pod',
      status: {
        phase: 'Running',
        containerStatuses: [{ name: 'vllm', ready: true, restartCount: 0, state: { running: {} } }],
      },
      want: { Ready: '1/1', Status: 'Running', Restarts: '0' },
    },
    {
      case: 'a Pod whose container is waiting',
      status: {
        phase: 'Pending',
        containerStatuses: [
          { name: 'vllm', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } },
        ],
      },
      want: { Ready: '0/1', Status: 'ContainerCreating', Restarts: '0' },
    },
    {
      case: 'a crash-looping Pod',
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'vllm',
            ready: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, finishedAt: created(90_000) } },
          },
        ],
      },
      want: { Ready: '0/1', Status: 'CrashLoopBackOff', Restarts: '3 (90s ago)' },
    },
    {
      case: 'a completed k6 Pod',
      status: {
        phase: 'Succeeded',
        containerStatuses: [
          { name: 'k6', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
        ],
      },
      want: { Ready: '0/1', Status: 'Completed', Restarts: '0' },
    },
  ])('prints the READY, STATUS and RESTARTS of $case', ({ status, want }) => {
    // Act
    const cells = cellsOf('Pod', {
      metadata: { name: 'x', creationTimestamp: created(60_000) },
      spec: { containers: [{ name: 'vllm' }] },
      status,
    });

    // Assess
    expect(cells).toEqual({ Name: 'x', Age: '60s', ...want });
  });

  it('prints a Job as Complete with completions and duration', () => {
    // Act
    const cells = cellsOf('Job', {
      metadata: { name: 'k6', creationTimestamp: created(600_000) },
      spec: { completions: 1, template: { spec: { containers: [] } } },
      status: {
        succeeded: 1,
        startTime: created(600_000),
        completionTime: created(480_000),
        conditions: [{ type: 'Complete', status: 'True' }],
      },
    });

    // Assess
    expect(cells).toEqual({ Name: 'k6', Status: 'Complete', Completions: '1/1', Duration: '2m', Age: '10m' });
  });

  it('prints a Service with its type, cluster IP and ports', () => {
    // Act
    const cells = cellsOf('Service', {
      metadata: { name: 'vllm', creationTimestamp: created(0) },
      spec: { type: 'NodePort', clusterIP: '10.100.0.10', ports: [{ port: 8000, nodePort: 30080, protocol: 'TCP' }] },
    });

    // Assess
    expect(cells).toEqual({
      Name: 'vllm',
      Type: 'NodePort',
      'Cluster-IP': '10.100.0.10',
      'External-IP': '<none>',
      'Port(s)': '8000:30080/TCP',
      Age: '0s',
    });
  });

  it('uses the printer columns of a CRD, NAME first, typed cells, and a blank cell for a missing value', () => {
    // Prepare
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'scaledobjects.keda.sh' },
      spec: {
        versions: [
          {
            name: 'v1alpha1',
            additionalPrinterColumns: [
              { name: 'Max', type: 'integer', jsonPath: '.spec.maxReplicaCount' },
              { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
              { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            ],
          },
        ],
      },
    } as KubeObject;
    const so = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'vllm', creationTimestamp: created(30_000) },
      spec: { maxReplicaCount: 5 },
    } as KubeObject;

    // Act
    const table = toTable(RESOURCES.ScaledObject, [so], { nowMs: NOW, crd });

    // Assess
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Max', 'Ready', 'Age']);
    expect(table.rows[0]?.cells).toEqual(['vllm', 5, null, '30s']);
  });

  it("falls back to KEDA's columns for a ScaledObject CRD stored without printer columns", () => {
    // Act
    const table = toTable(RESOURCES.ScaledObject, [], {
      nowMs: NOW,
      crd: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x' } },
    });

    // Assess
    expect(table.columnDefinitions.map((c) => c.name.toUpperCase()).join(' ')).toBe(
      'NAME SCALETARGETKIND SCALETARGETNAME MIN MAX READY ACTIVE FALLBACK PAUSED TRIGGERS AUTHENTICATIONS AGE',
    );
  });

  it('carries each row object as PartialObjectMetadata (kubectl -A reads the namespace from it)', () => {
    // Act
    const table = toTable(
      RESOURCES.ConfigMap,
      [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' }, data: { a: '1' } }],
      { nowMs: NOW, resourceVersion: '7' },
    );

    // Assess
    expect(table).toMatchObject({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '7' },
      rows: [
        {
          cells: ['c', 1, '<unknown>'],
          object: {
            kind: 'PartialObjectMetadata',
            apiVersion: 'meta.k8s.io/v1',
            metadata: { name: 'c', namespace: 'ns' },
          },
        },
      ],
    });
  });
});
