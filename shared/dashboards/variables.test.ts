import { describe, expect, it } from '@jest/globals';
import { DashboardMissingVariableError, DashboardTemplateError } from './errors.js';
import { builtQuery, catalogQuery, renderQuery, toTemplate } from './variables.js';

const VALUES = { namespace: 'inference', model_name: 'mistral', pod: '.+', __rate_interval: '1m' };

describe('Function: catalogQuery', () => {
  it("turns the catalog's query for one Deployment into one for the selected namespace, model and Pods", () => {
    // Act
    const expr = catalogQuery('queue_depth');

    // Assess
    expect(expr).toBe('sum(vllm:num_requests_waiting{namespace="$namespace", model_name="$model_name", pod=~"$pod"})');
  });

  it('uses $__rate_interval as every rate window', () => {
    // Act
    const expr = catalogQuery('requests_completed_rate');

    // Assess
    expect(expr).toContain('[$__rate_interval]');
    expect(expr).not.toMatch(/\[\d/);
  });
});

describe('Function: toTemplate', () => {
  it('refuses a query that uses a variable the dashboards do not define, naming it', () => {
    // Act / Assess
    expect(() => toTemplate('up{job="$job"}')).toThrow(DashboardTemplateError);
    expect(() => toTemplate('up{job="$job"}')).toThrow('uses $job');
  });

  it('refuses a query in which a placeholder survived (the builders changed their output)', () => {
    // Act / Assess
    expect(() => builtQuery(() => 'up{deployment="vllm-eks-pilot-dashboard-placeholder"}')).toThrow(
      'a placeholder survived',
    );
  });
});

describe('Function: renderQuery', () => {
  it('replaces each variable the way Grafana interpolates it', () => {
    // Act
    const query = renderQuery(catalogQuery('container_cpu_cores'), VALUES);

    // Assess
    expect(query).toBe(
      'sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="inference", pod=~".+", container!="", ' +
        'container!="POD"}[1m]))',
    );
  });

  it.each([
    { case: 'a double quote', model: 'say "hi"', literal: 'model_name="say \\"hi\\""' },
    { case: 'a backslash', model: 'a\\b', literal: 'model_name="a\\\\b"' },
    { case: 'an S3 path', model: 's3://bucket/Ministral-3-8B/', literal: 'model_name="s3://bucket/Ministral-3-8B/"' },
  ])('escapes a model name with $case inside its string literal', ({ model, literal }) => {
    // Act
    const query = renderQuery(catalogQuery('queue_depth'), { ...VALUES, model_name: model });

    // Assess
    expect(query).toContain(literal);
  });

  it('refuses a rate interval that is not a PromQL duration', () => {
    // Act / Assess
    expect(() => renderQuery(catalogQuery('preemptions_rate'), { ...VALUES, __rate_interval: '1 minute' })).toThrow(
      '__rate_interval',
    );
  });

  it('refuses to render a variable it has no value for, naming it', () => {
    // Act / Assess
    expect(() => renderQuery('up{instance="$instance"}', VALUES)).toThrow(DashboardMissingVariableError);
    expect(() => renderQuery('up{instance="$instance"}', VALUES)).toThrow('no value for $instance');
  });
});
