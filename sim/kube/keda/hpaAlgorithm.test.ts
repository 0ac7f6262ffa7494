import { describe, expect, it } from '@jest/globals';
import { KedaInvalidHpaInputError, KedaInvalidScaledObjectError } from './errors.js';
import {
  computeHpaReplicas,
  type HpaBehavior,
  type HpaHistory,
  type HpaInput,
  type MetricReading,
  resolveBehavior,
} from './hpaAlgorithm.js';

/** The AWS guide's ScaledObject behavior: up 2 Pods / 60 s after a 30 s window (Max); down 1 Pod / 120 s after 300 s (Min). */
const GUIDE: HpaBehavior = {
  scaleUp: {
    stabilizationWindowSeconds: 30,
    policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }],
    selectPolicy: 'Max',
  },
  scaleDown: {
    stabilizationWindowSeconds: 300,
    policies: [{ type: 'Pods', value: 1, periodSeconds: 120 }],
    selectPolicy: 'Min',
  },
};
/** No windows and no rate limit worth speaking of: isolates the metric arithmetic. */
const FREE: HpaBehavior = {
  scaleUp: { stabilizationWindowSeconds: 0, policies: [{ type: 'Percent', value: 1000, periodSeconds: 15 }] },
  scaleDown: { stabilizationWindowSeconds: 0, policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
};

const NOW = 1_000_000_000;
const EMPTY: HpaHistory = { recommendations: [], scaleUpEvents: [], scaleDownEvents: [] };

function queue(value: number | undefined, error?: string): MetricReading {
  return {
    name: 's0-prometheus',
    label: 'queue',
    targetType: 'AverageValue',
    target: 25,
    ...(value !== undefined ? { value } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}

function latency(value: number | undefined, error?: string): MetricReading {
  return {
    name: 's1-prometheus',
    label: 'p95',
    targetType: 'AverageValue',
    target: 5,
    ...(value !== undefined ? { value } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}

function input(overrides: Partial<HpaInput>): HpaInput {
  return {
    nowMs: NOW,
    specReplicas: 1,
    minReplicas: 1,
    maxReplicas: 5,
    metrics: [queue(0)],
    behavior: GUIDE,
    history: EMPTY,
    ...overrides,
  };
}

/** A history with the given recommendations and scale events, `secondsAgo` before NOW. */
function past(entries: {
  recommendations?: Array<[replicas: number, secondsAgo: number]>;
  up?: Array<[change: number, secondsAgo: number]>;
  down?: Array<[change: number, secondsAgo: number]>;
}): HpaHistory {
  return {
    recommendations: (entries.recommendations ?? []).map(([replicas, ago]) => ({ replicas, atMs: NOW - ago * 1000 })),
    scaleUpEvents: (entries.up ?? []).map(([change, ago]) => ({ change, atMs: NOW - ago * 1000 })),
    scaleDownEvents: (entries.down ?? []).map(([change, ago]) => ({ change, atMs: NOW - ago * 1000 })),
  };
}

describe('Function: computeHpaReplicas', () => {
  describe('metric arithmetic', () => {
    it.each([
      // KEDA's AverageValue: the query returns the total; the target is per Pod → ceil(80 / 25) = 4.
      { case: 'AverageValue divides the total by the per-Pod target', spec: 1, metrics: [queue(80)], want: 4 },
      // 2 Pods at 53 in total: ratio 53 / (25 × 2) = 1.06, within the 0.1 tolerance → no change.
      { case: 'tolerance: a ratio of 1.06 changes nothing', spec: 2, metrics: [queue(53)], want: 2 },
      // 56 / 50 = 1.12 leaves the tolerance band → ceil(56 / 25) = 3.
      { case: 'tolerance: a ratio of 1.12 scales', spec: 2, metrics: [queue(56)], want: 3 },
      // 20 Pods at 460 in total: ratio 460 / 500 = 0.92 is inside the band → stays 20 (not ceil(18.4) = 19).
      { case: 'tolerance: a ratio of 0.92 keeps the size', spec: 20, metrics: [queue(460)], want: 20 },
      // 20 Pods at 440: ratio 0.88 leaves the band → ceil(440 / 25) = 18.
      { case: 'tolerance: a ratio of 0.88 scales down', spec: 20, metrics: [queue(440)], want: 18 },
      // The highest proposal across metrics wins: queue → 4, p95 12 s / 5 s → 3.
      { case: 'the maximum over the metrics', spec: 1, metrics: [queue(80), latency(12)], want: 4 },
      // p95 = 10 s with AverageValue is "2 replicas" whatever the current count (the guide's note for checkers).
      { case: 'a latency trigger with AverageValue asks for ceil(p95 / 5)', spec: 1, metrics: [latency(10)], want: 2 },
    ])('$case', ({ spec, metrics, want }) => {
      // Act
      const decision = computeHpaReplicas(input({ specReplicas: spec, metrics, behavior: FREE, maxReplicas: 30 }));

      // Assess
      expect(decision.desiredReplicas).toBe(want);
      expect(decision.rescale).toBe(want !== spec);
    });

    it('writes the reason a human can check: value / target per Pod → replicas', () => {
      // Act
      const decision = computeHpaReplicas(
        input({ metrics: [queue(80)], history: past({ recommendations: [[1, 60]] }) }),
      );

      // Assess
      expect(decision.reason).toBe(
        'queue 80 / 25 per Pod → 4; scale-up policy allows +2 Pods per 60 s → 3; scale 1 → 3',
      );
      expect(decision.rescaleReason).toBe('external metric s0-prometheus above target');
    });

    it('a Value target scales the ready Pods by value / target', () => {
      // Prepare: 2 ready Pods, a total of 10 against a target of 5 → ceil(2 × 10 / 5) = 4.
      const metric: MetricReading = { name: 's0-prometheus', targetType: 'Value', target: 5, value: 10 };

      // Act
      const decision = computeHpaReplicas(
        input({ specReplicas: 2, readyReplicas: 2, metrics: [metric], behavior: FREE, maxReplicas: 10 }),
      );

      // Assess
      expect(decision.desiredReplicas).toBe(4);
      expect(decision.metrics[0]?.currentMilli).toBe(10_000);
    });

    it('reports the per-Pod average in milli-units, as the HPA status does', () => {
      // Act: 200 waiting over 3 Pods → ceil(66 666.7 milli) = 66 667 milli.
      const decision = computeHpaReplicas(input({ specReplicas: 3, metrics: [queue(200)] }));

      // Assess
      expect(decision.metrics[0]).toMatchObject({ currentMilli: 66_667, targetMilli: 25_000, proposal: 8 });
    });
  });

  describe('behavior: stabilization windows and scaling policies', () => {
    it.each([
      // The guide's scale-up: from 1 Pod, +2 per 60 s → 3 (the 30 s window holds nothing lower).
      {
        case: 'guide scale-up: at most +2 Pods per 60 s',
        spec: 1,
        value: 200,
        history: past({ recommendations: [[1, 45]] }),
        want: 3,
        limited: 'ScaleUpLimit',
      },
      // 2 Pods were added 30 s ago: the period started at 1 → limit 1 + 2 = 3 → no further scale-up yet.
      {
        case: 'guide scale-up: Pods added within the period count',
        spec: 3,
        value: 200,
        history: past({ recommendations: [[8, 45]], up: [[2, 30]] }),
        want: 3,
        limited: 'ScaleUpLimit',
      },
      // The same event exactly 60 s ago is outside the period (only strictly newer events count): 3 + 2 = 5 = max.
      {
        case: 'guide scale-up: an event exactly one period ago no longer counts',
        spec: 3,
        value: 200,
        history: past({ recommendations: [[8, 45]], up: [[2, 60]] }),
        want: 5,
        limited: 'TooManyReplicas',
      },
      // A recommendation of 1 twenty seconds ago is inside the 30 s up window: the lowest (1) holds.
      {
        case: 'guide scale-up window: the lowest recent recommendation holds',
        spec: 1,
        value: 200,
        history: past({ recommendations: [[1, 20]] }),
        want: 1,
        ableToScale: 'ScaleUpStabilized',
      },
      // The queue is empty but 8 was recommended 200 s ago: the 300 s down window keeps 5.
      {
        case: 'guide scale-down window: the highest recent recommendation holds',
        spec: 5,
        value: 0,
        history: past({ recommendations: [[8, 200]] }),
        want: 5,
        ableToScale: 'ScaleDownStabilized',
      },
      // After the window: −1 Pod per 120 s.
      {
        case: 'guide scale-down: one Pod per 120 s after the window',
        spec: 5,
        value: 0,
        history: past({ recommendations: [[8, 301]] }),
        want: 4,
        limited: 'ScaleDownLimit',
      },
      // One Pod was removed 60 s ago: the period started at 5 → floor 4 → no further scale-down yet.
      {
        case: 'guide scale-down: Pods removed within the period count',
        spec: 4,
        value: 0,
        history: past({ recommendations: [[8, 400]], down: [[1, 60]] }),
        want: 4,
        limited: 'ScaleDownLimit',
      },
      // With 2 Pods and an empty queue the policy floor (2 − 1) meets minReplicas 1: min is what limits.
      {
        case: 'guide scale-down ends at minReplicas',
        spec: 2,
        value: 0,
        history: past({ recommendations: [[0, 400]] }),
        want: 1,
        limited: 'TooFewReplicas',
      },
      // The policy would allow 3 + 2 = 5 and the metric wants 8, but maxReplicas is 4.
      {
        case: 'maxReplicas caps the policy',
        spec: 3,
        value: 200,
        max: 4,
        history: past({ recommendations: [[8, 45]] }),
        want: 4,
        limited: 'TooManyReplicas',
      },
    ])('$case', ({ spec, value, history, want, max, limited, ableToScale }) => {
      // Act
      const decision = computeHpaReplicas(
        input({ specReplicas: spec, metrics: [queue(value)], history, ...(max ? { maxReplicas: max } : {}) }),
      );

      // Assess
      expect(decision.desiredReplicas).toBe(want);
      if (limited) expect(decision.conditions.ScalingLimited?.reason).toBe(limited);
      if (ableToScale) expect(decision.conditions.AbleToScale?.reason).toBe(ableToScale);
    });

    it.each([
      // +50 % of 3 is 4.5, rounded up so that small targets can grow → 5.
      {
        case: 'Percent scale-up rounds up',
        spec: 3,
        value: 1000,
        behavior: { scaleUp: { policies: [{ type: 'Percent', value: 50, periodSeconds: 60 }] } },
        want: 5,
      },
      // −50 % of 5 is 2.5, truncated → 2.
      {
        case: 'Percent scale-down truncates',
        spec: 5,
        value: 0,
        behavior: {
          scaleDown: { stabilizationWindowSeconds: 0, policies: [{ type: 'Percent', value: 50, periodSeconds: 60 }] },
        },
        want: 2,
      },
      // Max: the policy allowing the biggest change: max(4 + 1, 4 × 2) = 8.
      {
        case: 'selectPolicy Max picks the biggest change',
        spec: 4,
        value: 1000,
        behavior: {
          scaleUp: {
            selectPolicy: 'Max',
            policies: [
              { type: 'Pods', value: 1, periodSeconds: 60 },
              { type: 'Percent', value: 100, periodSeconds: 60 },
            ],
          },
        },
        want: 8,
      },
      // Min: the smallest change: min(4 + 1, 8) = 5.
      {
        case: 'selectPolicy Min picks the smallest change',
        spec: 4,
        value: 1000,
        behavior: {
          scaleUp: {
            selectPolicy: 'Min',
            policies: [
              { type: 'Pods', value: 1, periodSeconds: 60 },
              { type: 'Percent', value: 100, periodSeconds: 60 },
            ],
          },
        },
        want: 5,
      },
      // Scale-down with Min: the smallest removal, max(6 − 1, 6 × 0.5) = 5.
      {
        case: 'scale-down selectPolicy Min removes the least',
        spec: 6,
        value: 0,
        behavior: {
          scaleDown: {
            stabilizationWindowSeconds: 0,
            selectPolicy: 'Min',
            policies: [
              { type: 'Pods', value: 1, periodSeconds: 60 },
              { type: 'Percent', value: 50, periodSeconds: 60 },
            ],
          },
        },
        want: 5,
      },
      // Disabled up: the metric wants 40 but the size stays.
      {
        case: 'selectPolicy Disabled stops scale-up',
        spec: 2,
        value: 1000,
        behavior: { scaleUp: { selectPolicy: 'Disabled' } },
        want: 2,
      },
      // Disabled down: an empty queue does not remove Pods.
      {
        case: 'selectPolicy Disabled stops scale-down',
        spec: 4,
        value: 0,
        behavior: { scaleDown: { stabilizationWindowSeconds: 0, selectPolicy: 'Disabled' } },
        want: 4,
      },
      // Defaults when behavior is given without scaleUp: +4 Pods or +100 % per 15 s (Max) → max(2 + 4, 4) = 6.
      {
        case: 'default scale-up rules: +4 Pods or double per 15 s',
        spec: 2,
        value: 1000,
        behavior: {},
        want: 6,
      },
    ] satisfies Array<{ case: string; spec: number; value: number; behavior: HpaBehavior; want: number }>)(
      '$case',
      ({ spec, value, behavior, want }) => {
        // Act
        const decision = computeHpaReplicas(
          input({ specReplicas: spec, metrics: [queue(value)], behavior, maxReplicas: 50, history: EMPTY }),
        );

        // Assess
        expect(decision.desiredReplicas).toBe(want);
      },
    );
  });

  describe('bounds, disabled HPA and failed metrics', () => {
    it.each([
      // Someone scaled the Deployment to 7: the HPA goes straight back to max, without policies.
      {
        case: 'above maxReplicas goes to max',
        spec: 7,
        metrics: [queue(0)],
        want: 5,
        reason: 'above Spec.MaxReplicas',
      },
      // Below min: straight to min.
      {
        case: 'below minReplicas goes to min',
        spec: 1,
        min: 2,
        metrics: [queue(0)],
        want: 2,
        reason: 'below Spec.MinReplicas',
      },
      // spec.replicas 0 with minReplicas 1: the HPA is disabled (KEDA activates from zero itself).
      { case: 'a target at 0 disables the HPA', spec: 0, metrics: [queue(500)], want: 0, reason: '' },
      // Every metric failed: no scaling at all.
      {
        case: 'every metric failed: no scaling',
        spec: 3,
        metrics: [queue(undefined, 'connection refused')],
        want: 3,
        reason: '',
      },
      // One failed, the other asks for more: scale up on what works (4 → +2 policy → 5).
      {
        case: 'one metric failed, the other scales up',
        spec: 3,
        metrics: [queue(200), latency(undefined, 'bad_data')],
        history: past({ recommendations: [[8, 45]] }),
        want: 5,
        reason: 'above target',
      },
      // One failed, the other would scale down: a missing metric must not remove capacity.
      {
        case: 'one metric failed, the other would scale down: no scaling',
        spec: 3,
        metrics: [queue(0), latency(undefined, 'bad_data')],
        history: past({ recommendations: [[0, 400]] }),
        want: 3,
        reason: '',
      },
    ])('$case', ({ spec, min, metrics, history, want, reason }) => {
      // Act
      const decision = computeHpaReplicas(
        input({ specReplicas: spec, metrics, ...(min ? { minReplicas: min } : {}), ...(history ? { history } : {}) }),
      );

      // Assess
      expect(decision.desiredReplicas).toBe(want);
      expect(decision.rescaleReason).toContain(reason);
    });

    it('says why it cannot scale when every metric fails', () => {
      // Act
      const decision = computeHpaReplicas(
        input({ specReplicas: 2, metrics: [queue(undefined, 'could not reach Prometheus')] }),
      );

      // Assess
      expect(decision.rescale).toBe(false);
      expect(decision.conditions.ScalingActive).toEqual({
        status: 'False',
        reason: 'FailedGetExternalMetric',
        message: 'the HPA was unable to compute the replica count: could not reach Prometheus',
      });
      expect(decision.reason).toContain('queue: could not reach Prometheus');
    });

    it('marks the HPA ScalingDisabled while the target has 0 replicas', () => {
      // Act
      const decision = computeHpaReplicas(input({ specReplicas: 0, metrics: [queue(500)] }));

      // Assess
      expect(decision.conditions.ScalingActive?.reason).toBe('ScalingDisabled');
      expect(decision.rescale).toBe(false);
    });
  });

  describe('without behavior (the legacy path)', () => {
    it.each([
      // At most max(2 × 1, 4) = 4 per reconcile, however high the queue.
      { case: 'scale-up limited to max(2 × current, 4)', spec: 1, value: 250, history: EMPTY, want: 4 },
      // From 5: max(10, 4) = 10.
      { case: 'scale-up limited to twice the current size', spec: 5, value: 1000, history: EMPTY, want: 10 },
      // A recommendation of 5 a minute ago holds within the controller's 300 s scale-down window.
      {
        case: 'the 300 s scale-down window',
        spec: 5,
        value: 0,
        history: past({ recommendations: [[5, 60]] }),
        want: 5,
      },
      // Older than 300 s: straight down to minReplicas (no per-period rate limit on this path).
      {
        case: 'after the window, down to min at once',
        spec: 5,
        value: 0,
        history: past({ recommendations: [[5, 301]] }),
        want: 1,
      },
    ])('$case', ({ spec, value, history, want }) => {
      // Prepare
      const { behavior: _unused, ...rest } = input({
        specReplicas: spec,
        metrics: [queue(value)],
        history,
        maxReplicas: 20,
      });

      // Act
      const decision = computeHpaReplicas(rest);

      // Assess
      expect(decision.desiredReplicas).toBe(want);
    });
  });

  describe('history', () => {
    it('remembers the current size on the first reconcile, so a new HPA waits out its up window', () => {
      // Act: no history; the queue asks for 8.
      const first = computeHpaReplicas({ ...input({ metrics: [queue(200)] }), history: undefined });

      // Assess
      expect(first.desiredReplicas).toBe(1);
      expect(first.conditions.AbleToScale?.reason).toBe('ScaleUpStabilized');
      expect(first.history.recommendations).toEqual([
        { replicas: 1, atMs: NOW },
        { replicas: 8, atMs: NOW },
      ]);
    });

    it('follows the guide policies over ten minutes of load then quiet, polled every 30 s', () => {
      // Prepare: 1 replica, a queue of 200 for the first 5 minutes, then empty.
      let history: HpaHistory | undefined;
      let replicas = 1;
      const timeline: Array<[seconds: number, replicas: number]> = [];

      // Act
      for (let seconds = 0; seconds <= 1500; seconds += 30) {
        const decision = computeHpaReplicas({
          ...input({ specReplicas: replicas, metrics: [queue(seconds < 300 ? 200 : 0)] }),
          nowMs: NOW + seconds * 1000,
          history,
        });
        history = decision.history;
        if (decision.desiredReplicas !== replicas) timeline.push([seconds, decision.desiredReplicas]);
        replicas = decision.desiredReplicas;
      }

      // Assess: up +2 after the 30 s window, +2 again a period later (capped at 5); the last high recommendation
      // is at 270 s and one exactly 300 s old no longer counts, so the first Pod goes at 570 s, then one every 120 s.
      expect(timeline).toEqual([
        [30, 3],
        [90, 5],
        [570, 4],
        [690, 3],
        [810, 2],
        [930, 1],
      ]);
    });
  });

  describe('input checks', () => {
    it.each([
      { case: 'negative replicas', overrides: { specReplicas: -1 }, field: 'specReplicas' },
      { case: 'max below min', overrides: { minReplicas: 3, maxReplicas: 2 }, field: 'maxReplicas' },
      { case: 'a zero target', overrides: { metrics: [{ ...queue(1), target: 0 }] }, field: 'metrics[0].target' },
      {
        case: 'an unknown target type',
        overrides: { metrics: [{ ...queue(1), targetType: 'Utilization' as 'Value' }] },
        field: 'metrics[0].targetType',
      },
    ])('rejects $case naming the field', ({ overrides, field }) => {
      // Act
      const act = () => computeHpaReplicas(input(overrides));

      // Assess
      expect(act).toThrow(KedaInvalidHpaInputError);
      expect(act).toThrow(new RegExp(`^${field.replace(/[[\]]/g, '\\$&')}:`));
    });
  });
});

describe('Function: resolveBehavior', () => {
  it('fills the API server defaults', () => {
    // Act
    const resolved = resolveBehavior({ scaleUp: { stabilizationWindowSeconds: 30 } });

    // Assess
    expect(resolved.scaleUp).toEqual({
      stabilizationWindowSeconds: 30,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    });
    expect(resolved.scaleDown).toEqual({
      stabilizationWindowSeconds: 300,
      selectPolicy: 'Max',
      policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
    });
  });

  it.each([
    {
      case: 'a window above one hour',
      behavior: { scaleUp: { stabilizationWindowSeconds: 3601 } },
      field: 'behavior.scaleUp.stabilizationWindowSeconds',
    },
    {
      case: 'an unknown selectPolicy',
      behavior: { scaleDown: { selectPolicy: 'Least' } },
      field: 'behavior.scaleDown.selectPolicy',
    },
    { case: 'an empty policy list', behavior: { scaleUp: { policies: [] } }, field: 'behavior.scaleUp.policies' },
    {
      case: 'a period above 1800 s',
      behavior: { scaleUp: { policies: [{ type: 'Pods', value: 1, periodSeconds: 3600 }] } },
      field: 'behavior.scaleUp.policies[0].periodSeconds',
    },
    {
      case: 'a zero policy value',
      behavior: { scaleDown: { policies: [{ type: 'Pods', value: 0, periodSeconds: 60 }] } },
      field: 'behavior.scaleDown.policies[0].value',
    },
    {
      case: 'an unknown policy type',
      behavior: { scaleDown: { policies: [{ type: 'Nodes', value: 1, periodSeconds: 60 }] } },
      field: 'behavior.scaleDown.policies[0].type',
    },
  ])('rejects $case naming the field', ({ behavior, field }) => {
    // Act
    const act = () => resolveBehavior(behavior as HpaBehavior);

    // Assess
    expect(act).toThrow(KedaInvalidScaledObjectError);
    expect(act).toThrow(`${field}:`);
  });
});
