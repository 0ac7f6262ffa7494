import { describe, expect, it } from '@jest/globals';
import { scaledObject } from '../../shared/keda/index.js';
import { candidateFromScaledObject } from './candidate.js';
import { guideCandidate, reportCandidate } from './candidates.js';
import { WhatIfCandidateInvalidError } from './errors.js';

const PRODUCT = scaledObject({ model: 'm', ampWorkspaceUrl: 'http://prometheus:9090', authentication: false });

function withTriggers(triggers: unknown[]): unknown {
  return { ...PRODUCT, spec: { ...(PRODUCT.spec as object), triggers } };
}

describe('Function: candidateFromScaledObject', () => {
  it("reads the product's ScaledObject: the queue and latency triggers, their forms, the 1 m rate window", () => {
    // Act
    const candidate = candidateFromScaledObject('so.yaml', PRODUCT);

    // Assess
    const { triggers } = candidate.scaledObject;
    expect(triggers[candidate.queueTrigger]).toMatchObject({ threshold: 25, metricType: 'AverageValue' });
    expect(triggers[candidate.latencyTrigger]).toMatchObject({ threshold: 5, metricType: 'Value' });
    expect(candidate.rateWindowS).toBe(60);
    expect(candidate.scaledObject).toMatchObject({ minReplicaCount: 1, maxReplicaCount: 5 });
  });

  it.each([
    {
      case: 'no latency trigger',
      manifest: () => withTriggers([(PRODUCT.spec as { triggers: unknown[] }).triggers[0]]),
      message: /--candidate so\.yaml: .*p95Latency|e2e_request_latency/,
    },
    {
      case: 'a third trigger',
      manifest: () =>
        withTriggers([
          ...(PRODUCT.spec as { triggers: unknown[] }).triggers,
          { type: 'prometheus', metadata: { serverAddress: 'http://p:9090', query: 'up', threshold: '1' } },
        ]),
      message: /spec\.triggers\[2\]: a trigger the replay cannot compute/,
    },
    { case: 'another kind', manifest: () => ({ ...PRODUCT, kind: 'Deployment' }), message: /kind: got "Deployment"/ },
    { case: 'a list', manifest: () => [], message: /a ScaledObject/ },
  ])('refuses $case, naming the field', ({ manifest, message }) => {
    // Act / Assess
    expect(() => candidateFromScaledObject('so.yaml', manifest())).toThrow(WhatIfCandidateInvalidError);
    expect(() => candidateFromScaledObject('so.yaml', manifest())).toThrow(message);
  });
});

describe('Function: guideCandidate', () => {
  it("is the guide's ScaledObject with the guide's AverageValue latency form", () => {
    // Act
    const { scaledObject: so, latencyTrigger, queueTrigger } = guideCandidate('m');

    // Assess
    expect(so.triggers[queueTrigger]).toMatchObject({ threshold: 25, activationThreshold: 1 });
    expect(so.triggers[latencyTrigger]).toMatchObject({ threshold: 5, metricType: 'AverageValue' });
    expect(so.behavior?.scaleUp?.stabilizationWindowSeconds).toBe(30);
    expect(so.behavior?.scaleDown?.stabilizationWindowSeconds).toBe(300);
  });
});

describe('Function: reportCandidate', () => {
  const derived = (value: number) => ({ value, reason: 'r', formula: 'f' });
  const report = (thresholds: unknown) => ({ analysis: { thresholds } });
  const scaleIn = { value: { queueDepth: 0, p95BelowSeconds: 2, forSeconds: 300 }, reason: 'r', formula: 'f' };

  it('puts the rounded thresholds into the product ScaledObject, latency compared as a whole', () => {
    // Act
    const candidate = reportCandidate(
      'report:r.json',
      'm',
      report({
        queueDepthPerPod: derived(7.4),
        queueActivation: derived(1),
        p95LatencySeconds: derived(3.26),
        scaleIn,
      }),
    );

    // Assess
    const { triggers } = candidate.scaledObject;
    expect(triggers[candidate.queueTrigger]).toMatchObject({ threshold: 7, metricType: 'AverageValue' });
    expect(triggers[candidate.latencyTrigger]).toMatchObject({ threshold: 3.3, metricType: 'Value' });
  });

  it.each([
    { case: 'no thresholds (saturation not found)', thresholds: null, message: /analysis\.thresholds/ },
    {
      case: 'a queue threshold that is not a number',
      thresholds: {
        queueDepthPerPod: { value: 'x' },
        queueActivation: derived(1),
        p95LatencySeconds: derived(3),
        scaleIn,
      },
      message: /analysis\.thresholds\.queueDepthPerPod\.value/,
    },
  ])('refuses a report with $case', ({ thresholds, message }) => {
    expect(() => reportCandidate('report:r.json', 'm', report(thresholds))).toThrow(message);
  });
});
