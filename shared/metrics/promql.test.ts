import { describe, expect, it } from '@jest/globals';
import {
  assertDuration,
  cadvisorSelector,
  dcgmSelector,
  escapeLabelValue,
  escapeRegex,
  formatMatchers,
  histogramQuantile,
  overVllmNames,
  vllmHistogramQuantile,
  vllmSelector,
} from './promql.js';
import type { Target } from '../config/index.js';
import {
  MetricsInvalidTargetError,
  PromqlInvalidArgumentError,
  PromqlInvalidLabelNameError,
  PromqlInvalidMetricNameError,
} from './errors.js';

const target: Target = {
  name: 'prod-ministral',
  cluster: 'ai-eks-docs',
  namespace: 'default',
  deployment: 'vllm-inference-app',
  model: 'ministral',
};

describe('Function: escapeLabelValue', () => {
  it.each([
    { case: 'plain text is unchanged', value: 'Ministral-3-8B', expected: 'Ministral-3-8B' },
    { case: 'a double quote', value: 'a"b', expected: 'a\\"b' },
    { case: 'a backslash', value: 'a\\b', expected: 'a\\\\b' },
    { case: 'a newline', value: 'a\nb', expected: 'a\\nb' },
    { case: 'tab and carriage return', value: '\t\r', expected: '\\t\\r' },
    { case: 'other C0 control characters', value: 'a\x01b\x1f', expected: 'a\\u0001b\\u001f' },
    {
      case: 'DEL and C1 controls (not \\x, which Go reads as raw bytes)',
      value: '\x7f\x85',
      expected: '\\u007f\\u0085',
    },
    { case: 'non-ASCII text is kept', value: 'modèle-🚀', expected: 'modèle-🚀' },
    { case: 'an S3 model path', value: 's3://bucket/Ministral-3-8B/', expected: 's3://bucket/Ministral-3-8B/' },
  ])('escapes $case', ({ value, expected }) => {
    // Act
    const escaped = escapeLabelValue(value);

    // Assess
    expect(escaped).toBe(expected);
  });

  it('turns a model name with a quote, a brace, a backslash and a newline into one exact literal', () => {
    // Prepare
    const evil = 'evil"}model\\x\nend';

    // Act
    const matcher = formatMatchers([{ name: 'model_name', op: '=', value: evil }]);

    // Assess
    expect(matcher).toBe(String.raw`{model_name="evil\"}model\\x\nend"}`);
  });

  it('round-trips through a JSON string parser, whose escapes match Go for these characters', () => {
    // Prepare
    const value = 'q"\\\n\t\x01end';

    // Act
    const parsed: unknown = JSON.parse(`"${escapeLabelValue(value)}"`);

    // Assess
    expect(parsed).toBe(value);
  });

  it('rejects an unpaired surrogate, which has no UTF-8 form', () => {
    // Act & Assess
    expect(() => escapeLabelValue('bad\uD800')).toThrow(PromqlInvalidArgumentError);
  });
});

describe('Function: escapeRegex', () => {
  it.each([
    { case: 'a dot', value: 'my.model', lookalike: 'myxmodel' },
    { case: 'a star', value: 'a*', lookalike: 'aaaa' },
    { case: 'a parenthesis group', value: 'x(y)', lookalike: 'xy' },
    { case: 'an alternation', value: 'a|b', lookalike: 'a' },
    { case: 'brackets and a plus', value: '[ab]+', lookalike: 'abab' },
    { case: 'anchors and a question mark', value: '^a$?', lookalike: 'a' },
    { case: 'a backslash', value: 'a\\d', lookalike: 'a1' },
  ])('makes $case match only itself', ({ value, lookalike }) => {
    // Prepare: Prometheus anchors a matcher's regex as ^(?:...)$; for these escapes RE2 and JS agree.
    const regex = new RegExp(`^(?:${escapeRegex(value)})$`);

    // Act & Assess
    expect(regex.test(value)).toBe(true);
    expect(regex.test(lookalike)).toBe(false);
  });

  it('is string-escaped again inside a matcher', () => {
    // Act
    const matcher = formatMatchers([{ name: 'pod', op: '=~', value: escapeRegex('a.b\\c') }]);

    // Assess: the regex a\.b\\c, written as a PromQL string literal.
    expect(matcher).toBe(String.raw`{pod=~"a\\.b\\\\c"}`);
  });
});

describe('Function: vllmSelector', () => {
  it('matches namespace, model and the Deployment Pods', () => {
    // Act
    const text = vllmSelector(target, 'vllm:num_requests_waiting');

    // Assess
    expect(text).toBe(
      'vllm:num_requests_waiting{namespace="default", model_name="ministral", ' +
        'pod=~"vllm-inference-app-[a-z0-9]+-[a-z0-9]+"}',
    );
  });

  it('adds the cluster matcher when the target names a cluster label', () => {
    // Act
    const text = vllmSelector({ ...target, clusterLabel: 'cluster' }, 'vllm:num_requests_running');

    // Assess
    expect(text).toContain(', cluster="ai-eks-docs"}');
  });

  it.each([
    { case: 'a dash', clusterLabel: 'cluster-name' },
    { case: 'a leading digit', clusterLabel: '1cluster' },
    { case: 'an empty name', clusterLabel: '' },
    { case: 'a quote', clusterLabel: 'a"b' },
  ])('rejects a cluster label name with $case', ({ clusterLabel }) => {
    // Act & Assess
    expect(() => vllmSelector({ ...target, clusterLabel }, 'vllm:num_requests_running')).toThrow(
      PromqlInvalidLabelNameError,
    );
  });

  it.each([
    { case: 'model', field: 'model' },
    { case: 'namespace', field: 'namespace' },
    { case: 'deployment', field: 'deployment' },
  ])('rejects an empty $case, which would match series without the label', ({ field }) => {
    // Act
    let thrown: unknown;
    try {
      vllmSelector({ ...target, [field]: '' }, 'vllm:num_requests_running');
    } catch (error) {
      thrown = error;
    }

    // Assess
    expect(thrown).toBeInstanceOf(MetricsInvalidTargetError);
    expect(thrown).toMatchObject({ field });
  });

  it('rejects an invalid metric name', () => {
    // Act & Assess
    expect(() => vllmSelector(target, 'vllm:bad name')).toThrow(PromqlInvalidMetricNameError);
  });
});

describe('Function: dcgmSelector', () => {
  it('uses the exporter namespace and pod labels, not the model', () => {
    // Act
    const text = dcgmSelector(target, 'DCGM_FI_DEV_FB_USED');

    // Assess
    expect(text).toBe('DCGM_FI_DEV_FB_USED{namespace="default", pod=~"vllm-inference-app-[a-z0-9]+-[a-z0-9]+"}');
  });
});

describe('Function: cadvisorSelector', () => {
  it('leaves out the Pod-level cgroup and the pause container', () => {
    // Act
    const text = cadvisorSelector(target, 'container_memory_working_set_bytes');

    // Assess
    expect(text).toBe(
      'container_memory_working_set_bytes{namespace="default", pod=~"vllm-inference-app-[a-z0-9]+-[a-z0-9]+", ' +
        'container!="", container!="POD"}',
    );
  });
});

describe('Function: overVllmNames', () => {
  it('asks for the current and the legacy name of a renamed series, current first', () => {
    // Act
    const text = overVllmNames({ renamed: 'kvCacheUsage' }, (name) => `${name}{}`);

    // Assess
    expect(text).toBe('(vllm:kv_cache_usage_perc{} or vllm:gpu_cache_usage_perc{})');
  });

  it('leaves a series that was never renamed alone', () => {
    // Act
    const text = overVllmNames('vllm:num_requests_waiting', (name) => name);

    // Assess
    expect(text).toBe('vllm:num_requests_waiting');
  });
});

describe('Function: vllmHistogramQuantile', () => {
  it('builds the documented quantile form and drops NaN', () => {
    // Act
    const text = vllmHistogramQuantile(target, 0.95, 'vllm:e2e_request_latency_seconds', '1m');

    // Assess
    expect(text).toBe(
      '(histogram_quantile(0.95, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket{namespace="default", ' +
        'model_name="ministral", pod=~"vllm-inference-app-[a-z0-9]+-[a-z0-9]+"}[1m])))) > -Inf',
    );
  });

  it.each([
    { case: 'above 1', q: 1.5 },
    { case: 'negative', q: -0.1 },
    { case: 'NaN', q: Number.NaN },
  ])('rejects a quantile $case', ({ q }) => {
    // Act & Assess
    expect(() => histogramQuantile(q, 'x')).toThrow(PromqlInvalidArgumentError);
  });
});

describe('Function: assertDuration', () => {
  it.each([
    { case: 'minutes', window: '2m', valid: true },
    { case: 'seconds', window: '90s', valid: true },
    { case: 'compound', window: '1h30m', valid: true },
    { case: 'milliseconds', window: '500ms', valid: true },
    { case: 'a bare number', window: '120', valid: false },
    { case: 'zero', window: '0s', valid: false },
    { case: 'empty', window: '', valid: false },
    { case: 'units out of order', window: '30m1h', valid: false },
    { case: 'an injection attempt', window: '2m]) or vector(1', valid: false },
  ])('accepts only positive PromQL durations: $case', ({ window, valid }) => {
    // Act
    const check = (): string => assertDuration(window);

    // Assess
    if (valid) expect(check()).toBe(window);
    else expect(check).toThrow(PromqlInvalidArgumentError);
  });
});
