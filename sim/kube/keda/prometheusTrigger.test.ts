import { describe, expect, it } from '@jest/globals';
import { KedaInvalidTriggerError, KedaTriggerQueryError } from './errors.js';
import {
  isTriggerActive,
  parsePrometheusTrigger,
  type ScaledObjectTrigger,
  triggerValue,
} from './prometheusTrigger.js';

/** The guide's queue trigger. */
const QUEUE: ScaledObjectTrigger = {
  type: 'prometheus',
  metricType: 'AverageValue',
  metadata: {
    serverAddress: 'http://kube-prometheus-stack-prometheus.monitoring.svc:9090',
    query: 'sum(vllm:num_requests_waiting) or vector(0)',
    threshold: '25',
    activationThreshold: '1',
  },
};

function withMetadata(metadata: Record<string, string | undefined>): ScaledObjectTrigger {
  const merged = { ...QUEUE.metadata, ...metadata };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  return { ...QUEUE, metadata: merged as Record<string, string> };
}

function sample(value: number) {
  return { labels: {}, value, timestampMs: 0 };
}

describe('Function: parsePrometheusTrigger', () => {
  it("reads the guide's trigger with KEDA's defaults", () => {
    // Act
    const trigger = parsePrometheusTrigger(QUEUE, 0);

    // Assess
    expect(trigger).toEqual({
      index: 0,
      metricName: 's0-prometheus',
      serverAddress: 'http://kube-prometheus-stack-prometheus.monitoring.svc:9090',
      query: 'sum(vllm:num_requests_waiting) or vector(0)',
      threshold: 25,
      activationThreshold: 1,
      metricType: 'AverageValue',
      ignoreNullValues: true,
    });
  });

  it('names the metric after the trigger index and defaults metricType and activationThreshold', () => {
    // Act
    const trigger = parsePrometheusTrigger(
      { type: 'prometheus', metadata: { ...QUEUE.metadata, activationThreshold: '' } },
      1,
    );

    // Assess
    expect(trigger).toMatchObject({ metricName: 's1-prometheus', metricType: 'AverageValue', activationThreshold: 0 });
  });

  it.each([
    {
      case: 'a missing threshold',
      trigger: withMetadata({ threshold: undefined }),
      field: 'spec.triggers[2].metadata.threshold',
    },
    {
      case: 'a threshold that is not a number',
      trigger: withMetadata({ threshold: 'twenty' }),
      field: 'spec.triggers[2].metadata.threshold',
    },
    {
      case: 'a zero threshold',
      trigger: withMetadata({ threshold: '0' }),
      field: 'spec.triggers[2].metadata.threshold',
    },
    { case: 'a missing query', trigger: withMetadata({ query: undefined }), field: 'spec.triggers[2].metadata.query' },
    {
      case: 'a missing serverAddress',
      trigger: withMetadata({ serverAddress: undefined }),
      field: 'spec.triggers[2].metadata.serverAddress',
    },
    {
      case: 'a bad ignoreNullValues',
      trigger: withMetadata({ ignoreNullValues: 'maybe' }),
      field: 'spec.triggers[2].metadata.ignoreNullValues',
    },
    {
      case: 'metricType Utilization',
      trigger: { ...QUEUE, metricType: 'Utilization' },
      field: 'spec.triggers[2].metricType',
    },
    { case: 'a scaler the twin does not run', trigger: { ...QUEUE, type: 'kafka' }, field: 'spec.triggers[2].type' },
  ])('rejects $case naming the field', ({ trigger, field }) => {
    // Act
    const act = () => parsePrometheusTrigger(trigger, 2);

    // Assess
    expect(act).toThrow(KedaInvalidTriggerError);
    expect(act).toThrow(`${field}:`);
  });
});

describe('Function: triggerValue', () => {
  const lenient = parsePrometheusTrigger(QUEUE, 0);
  const strict = parsePrometheusTrigger(withMetadata({ ignoreNullValues: 'false' }), 0);

  it.each([
    { case: 'one series gives its value', trigger: lenient, samples: [sample(42)], want: 42 },
    { case: 'an empty answer is 0 by default', trigger: lenient, samples: [], want: 0 },
    { case: 'NaN is 0 by default', trigger: lenient, samples: [sample(Number.NaN)], want: 0 },
    { case: '+Inf is 0 by default', trigger: lenient, samples: [sample(Number.POSITIVE_INFINITY)], want: 0 },
  ])('$case', ({ trigger, samples, want }) => {
    // Act
    const value = triggerValue(trigger, samples);

    // Assess
    expect(value).toBe(want);
  });

  it.each([
    { case: 'an empty answer with ignoreNullValues false', trigger: strict, samples: [], message: /result is empty/ },
    { case: 'NaN with ignoreNullValues false', trigger: strict, samples: [sample(Number.NaN)], message: /returns NaN/ },
    {
      case: 'several series, whatever ignoreNullValues says',
      trigger: lenient,
      samples: [sample(1), sample(2)],
      message: /multiple elements/,
    },
  ])('fails on $case', ({ trigger, samples, message }) => {
    // Act
    const act = () => triggerValue(trigger, samples);

    // Assess
    expect(act).toThrow(KedaTriggerQueryError);
    expect(act).toThrow(message);
  });
});

describe('Function: isTriggerActive', () => {
  it.each([
    { case: 'below the activation threshold', value: 0, want: false },
    { case: 'at the activation threshold', value: 1, want: false },
    { case: 'above the activation threshold', value: 1.5, want: true },
  ])('is $want $case', ({ value, want }) => {
    // Act
    const active = isTriggerActive(parsePrometheusTrigger(QUEUE, 0), value);

    // Assess
    expect(active).toBe(want);
  });
});
