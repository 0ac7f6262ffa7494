import { describe, expect, it } from '@jest/globals';
import { podNamePattern } from '../../metrics/index.js';
import { vllmDeployment, vllmService, vllmServiceMonitor } from '../../kube/manifests/index.js';
import type { KubeObject } from '../../kube/index.js';
import { CalibrationShadowExposedError } from '../errors.js';
import { shadowDeploymentName } from '../measuredDeployment.js';
import { EXECUTION_LABEL } from './names.js';
import { assertShadowUnexposed, SHADOW_LABEL, shadowObjects, triggersSeeingTheCopy } from './shadow.js';

const spec = { name: 'vllm', namespace: 'serving', model: 'm', servedModelName: 'm', maxModelLen: 4096, replicas: 3 };
const production: KubeObject = {
  ...vllmDeployment(spec),
  metadata: {
    ...vllmDeployment(spec).metadata,
    resourceVersion: '42',
    labels: { 'argocd.argoproj.io/instance': 'serving' },
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
  },
};
const service = vllmService(spec);
const monitor: KubeObject = {
  ...vllmServiceMonitor(spec),
  metadata: { ...vllmServiceMonitor(spec).metadata, labels: { release: 'kube-prometheus-stack' } },
};

function copy(): KubeObject[] {
  return shadowObjects({
    production,
    service,
    monitors: [monitor],
    executionLabel: 'calib-1',
    replicas: 1,
    annotations: { 'vllm-eks-pilot/calibration': 'calib-1' },
  });
}

describe('shadowDeploymentName', () => {
  it.each([
    ['vllm', 'vllm-shadow'],
    ['a'.repeat(40), `${'a'.repeat(40)}-shadow`],
  ])('%s → %s', (deployment, expected) => {
    expect(shadowDeploymentName(deployment)).toBe(expected);
  });

  it('keeps a long name within 47 characters (Pod names within 63), distinct per Deployment', () => {
    // Act
    const one = shadowDeploymentName(`${'x'.repeat(45)}-one`);
    const two = shadowDeploymentName(`${'x'.repeat(45)}-two`);

    // Assess
    expect(one.length).toBeLessThanOrEqual(47);
    expect(one).toMatch(/^x+-[0-9a-f]{6}-shadow$/);
    expect(one).not.toBe(two);
  });

  it("names Pods the target's own Pod matcher never selects", () => {
    // Assess: `<copy>-<hash>-<suffix>` has one dash-separated part too many for `<deployment>-<hash>-<suffix>`.
    const pod = `${shadowDeploymentName('vllm')}-7d4b9c8f6d-x2x9q`;
    expect(new RegExp(`^${podNamePattern('vllm')}$`).test(pod)).toBe(false);
    expect(new RegExp(`^${podNamePattern(shadowDeploymentName('vllm'))}$`).test(pod)).toBe(true);
  });
});

describe('shadowObjects', () => {
  it('copies the Pod template under labels of its own, at the test replicas, without the production metadata', () => {
    // Act
    const [deployment] = copy();

    // Assess
    const own = { [SHADOW_LABEL]: 'vllm', [EXECUTION_LABEL]: 'calib-1' };
    expect(deployment?.metadata).toEqual({
      name: 'vllm-shadow',
      namespace: 'serving',
      labels: own,
      annotations: { 'vllm-eks-pilot/calibration': 'calib-1' },
    });
    const copied = deployment?.spec as {
      replicas: number;
      selector: unknown;
      template: { metadata: unknown; spec: unknown };
    };
    const original = production.spec as { template: { spec: unknown } };
    expect(copied.replicas).toBe(1);
    expect(copied.selector).toEqual({ matchLabels: { [SHADOW_LABEL]: 'vllm' } });
    expect(copied.template.metadata).toMatchObject({ labels: own });
    expect(copied.template.spec).toEqual(original.template.spec);
  });

  it("gives the copy a Service with the production Service's ports, and a ServiceMonitor the same Prometheus selects", () => {
    // Act
    const [, copyService, copyMonitor] = copy();

    // Assess
    expect(copyService?.spec).toEqual({
      type: 'ClusterIP',
      selector: { [SHADOW_LABEL]: 'vllm' },
      ports: (service.spec as { ports: unknown[] }).ports,
    });
    expect(copyMonitor?.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack', [SHADOW_LABEL]: 'vllm' });
    expect(copyMonitor?.spec).toMatchObject({
      selector: { matchLabels: copyService?.metadata.labels },
      namespaceSelector: { matchNames: ['serving'] },
      endpoints: (monitor.spec as { endpoints: unknown[] }).endpoints,
    });
  });

  it('makes no ServiceMonitor when none scrapes production (a scraper that discovers Pods finds the copy too)', () => {
    // Act
    const objects = shadowObjects({
      production,
      service,
      monitors: [],
      executionLabel: 'calib-1',
      replicas: 1,
      annotations: {},
    });

    // Assess
    expect(objects.map((o) => o.kind)).toEqual(['Deployment', 'Service']);
  });
});

describe('assertShadowUnexposed', () => {
  it("accepts production's Service, which selects by production labels", () => {
    const [deployment, copyService] = copy();
    expect(() => assertShadowUnexposed([service, copyService as KubeObject], deployment as KubeObject)).not.toThrow();
  });

  it('refuses a copy that a Service selecting on the product’s own label would expose to users', () => {
    // Prepare
    const [deployment] = copy();
    const wide: KubeObject = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'everything-calibrated', namespace: 'serving' },
      spec: { selector: { [EXECUTION_LABEL]: 'calib-1' } },
    };

    // Act and assess
    expect(() => assertShadowUnexposed([service, wide], deployment as KubeObject)).toThrow(
      CalibrationShadowExposedError,
    );
    expect(() => assertShadowUnexposed([wide], deployment as KubeObject)).toThrow(/Service everything-calibrated/);
  });
});

describe('triggersSeeingTheCopy', () => {
  it("finds the guide's unscoped queue query, and not a query scoped to the Deployment's Pods", () => {
    // Prepare
    const so: KubeObject = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'vllm', namespace: 'serving' },
      spec: {
        triggers: [
          { type: 'prometheus', metadata: { query: 'sum(vllm:num_requests_waiting) or vector(0)' } },
          {
            type: 'prometheus',
            metadata: { query: 'sum(vllm:num_requests_waiting{pod=~"vllm-[a-z0-9]+-[a-z0-9]+"})' },
          },
          { type: 'cpu', metadata: { value: '80' } },
        ],
      },
    };

    // Act and assess
    expect(triggersSeeingTheCopy(so)).toEqual([0]);
  });
});
