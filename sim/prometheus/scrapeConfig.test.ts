import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { PrometheusConfigError } from './errors.js';
import {
  AGENT_REMOTE_WRITE_QUEUE,
  formatDuration,
  renderAgentConfig,
  renderPrometheusConfig,
  renderReceiverConfig,
  validateTargetGroups,
} from './scrapeConfig.js';

const targetFiles = {
  vllm: '/data/targets/vllm.json',
  'dcgm-exporter': '/data/targets/dcgm-exporter.json',
  'kubelet-cadvisor': '/data/targets/kubelet-cadvisor.json',
};

interface RenderedConfig {
  global: Record<string, unknown>;
  rule_files?: string[];
  scrape_configs: Array<{
    job_name: string;
    metrics_path: string;
    honor_labels: boolean;
    file_sd_configs: Array<{ files: string[]; refresh_interval: string }>;
  }>;
}

describe('Function: renderPrometheusConfig', () => {
  it('declares the three file_sd jobs with their paths, honor_labels and a 1 s refresh', () => {
    // Act
    const config = parse(renderPrometheusConfig({ scrapeIntervalSeconds: 1, targetFiles })) as RenderedConfig;

    // Assess
    expect(
      config.scrape_configs.map((job) => ({
        job: job.job_name,
        path: job.metrics_path,
        honorLabels: job.honor_labels,
        files: job.file_sd_configs[0]?.files,
        refresh: job.file_sd_configs[0]?.refresh_interval,
      })),
    ).toEqual([
      { job: 'vllm', path: '/metrics', honorLabels: false, files: [targetFiles.vllm], refresh: '1s' },
      {
        job: 'dcgm-exporter',
        path: '/metrics',
        honorLabels: true,
        files: [targetFiles['dcgm-exporter']],
        refresh: '1s',
      },
      {
        job: 'kubelet-cadvisor',
        path: '/metrics/cadvisor',
        honorLabels: true,
        files: [targetFiles['kubelet-cadvisor']],
        refresh: '1s',
      },
    ]);
  });

  it.each([
    { case: 'whole seconds', scrape: 15, evaluation: undefined, expected: ['15s', '15s', '15s'] },
    { case: 'sub-second scrape', scrape: 0.5, evaluation: 2, expected: ['500ms', '500ms', '2s'] },
  ])('sets intervals, with a timeout no longer than the interval: $case', ({ scrape, evaluation, expected }) => {
    // Act
    const config = parse(
      renderPrometheusConfig({
        scrapeIntervalSeconds: scrape,
        ...(evaluation !== undefined ? { evaluationIntervalSeconds: evaluation } : {}),
        targetFiles,
      }),
    ) as RenderedConfig;

    // Assess
    expect([config.global.scrape_interval, config.global.scrape_timeout, config.global.evaluation_interval]).toEqual(
      expected,
    );
  });

  it('lists rule files and external labels only when given', () => {
    // Act
    const bare = parse(renderPrometheusConfig({ scrapeIntervalSeconds: 1, targetFiles })) as RenderedConfig;
    const full = parse(
      renderPrometheusConfig({
        scrapeIntervalSeconds: 1,
        targetFiles,
        ruleFiles: ['/rules/vllm.yml'],
        externalLabels: { cluster: 'twin' },
      }),
    ) as RenderedConfig;

    // Assess
    expect(bare.rule_files).toBeUndefined();
    expect(bare.global.external_labels).toBeUndefined();
    expect(full.rule_files).toEqual(['/rules/vllm.yml']);
    expect(full.global.external_labels).toEqual({ cluster: 'twin' });
  });
});

interface RenderedAgentConfig extends RenderedConfig {
  remote_write: Array<{ url: string; queue_config: Record<string, unknown> }>;
}

describe('Function: renderAgentConfig', () => {
  const relay = 'http://127.0.0.1:9201/api/v1/write';

  it('scrapes the same three file_sd jobs as the single Prometheus, with no rules and no evaluation interval', () => {
    // Act
    const agent = parse(
      renderAgentConfig({ scrapeIntervalSeconds: 30, targetFiles, remoteWriteUrl: relay }),
    ) as RenderedAgentConfig;
    const single = parse(renderPrometheusConfig({ scrapeIntervalSeconds: 30, targetFiles })) as RenderedConfig;

    // Assess
    expect(agent.scrape_configs).toEqual(single.scrape_configs);
    expect(agent.global).toEqual({ scrape_interval: '30s', scrape_timeout: '30s' });
    // Agent mode refuses rule_files ("field rule_files is not allowed in agent mode").
    expect(agent.rule_files).toBeUndefined();
  });

  it('remote-writes to the relay with a small, frequent queue and carries the external labels', () => {
    // Act
    const agent = parse(
      renderAgentConfig({
        scrapeIntervalSeconds: 1,
        targetFiles,
        externalLabels: { cluster: 'twin' },
        remoteWriteUrl: relay,
      }),
    ) as RenderedAgentConfig;

    // Assess
    expect(agent.global.external_labels).toEqual({ cluster: 'twin' });
    expect(agent.remote_write).toEqual([{ url: relay, queue_config: { ...AGENT_REMOTE_WRITE_QUEUE } }]);
    // Prometheus' default is 5s: a 1 s deadline keeps the lag the profile's.
    expect(agent.remote_write[0]?.queue_config.batch_send_deadline).toBe('1s');
    expect(agent.remote_write[0]?.queue_config.max_shards).toBe(1);
  });

  it.each([
    { case: 'not a URL', url: '127.0.0.1:9201/api/v1/write' },
    { case: 'not http', url: 'ftp://127.0.0.1/api/v1/write' },
  ])('rejects a remote-write URL that is not http(s), naming the field: $case', ({ url }) => {
    // Act
    const act = () => renderAgentConfig({ scrapeIntervalSeconds: 1, targetFiles, remoteWriteUrl: url });

    // Assess
    expect(act).toThrow(PrometheusConfigError);
    expect(act).toThrow('remoteWriteUrl');
  });

  it('rejects a reserved external label name, naming it', () => {
    // Act
    const act = () =>
      renderAgentConfig({
        scrapeIntervalSeconds: 1,
        targetFiles,
        externalLabels: { __cluster: 'twin' },
        remoteWriteUrl: relay,
      });

    // Assess
    expect(act).toThrow(PrometheusConfigError);
    expect(act).toThrow('externalLabels.__cluster');
  });
});

describe('Function: renderReceiverConfig', () => {
  it('holds the rules and their interval and scrapes nothing: every sample arrives by remote write', () => {
    // Act
    const config = parse(renderReceiverConfig({ evaluationIntervalSeconds: 1, ruleFiles: ['/rules/vllm.yml'] })) as {
      global: Record<string, unknown>;
      rule_files?: string[];
      scrape_configs?: unknown;
    };

    // Assess
    expect(config).toEqual({ global: { evaluation_interval: '1s' }, rule_files: ['/rules/vllm.yml'] });
    expect(config.scrape_configs).toBeUndefined();
  });

  it('sends its alerts to the Alertmanagers given (API v2, by address), as AMP’s ruler to its alert manager', () => {
    // Act
    const config = parse(
      renderReceiverConfig({ evaluationIntervalSeconds: 1, alertmanagers: ['127.0.0.1:9093'] }),
    ) as Record<string, unknown>;
    const without = parse(renderReceiverConfig({ evaluationIntervalSeconds: 1, alertmanagers: [] })) as object;

    // Assess
    expect(config.alerting).toEqual({
      alertmanagers: [{ api_version: 'v2', static_configs: [{ targets: ['127.0.0.1:9093'] }] }],
    });
    expect(without).not.toHaveProperty('alerting');
  });

  it('rejects an Alertmanager that is not host:port, naming it', () => {
    // Act
    const act = () =>
      renderPrometheusConfig({ scrapeIntervalSeconds: 1, targetFiles, alertmanagers: ['http://127.0.0.1:9093'] });

    // Assess
    expect(act).toThrow(PrometheusConfigError);
    expect(act).toThrow('alertmanagers[0]');
  });

  it('rejects an evaluation interval that is not a positive duration, naming the field', () => {
    // Act
    const act = () => renderReceiverConfig({ evaluationIntervalSeconds: 0 });

    // Assess
    expect(act).toThrow(PrometheusConfigError);
    expect(act).toThrow('evaluationIntervalSeconds');
  });
});

describe('Function: formatDuration', () => {
  it.each([
    { case: 'zero', seconds: 0 },
    { case: 'negative', seconds: -1 },
    { case: 'not a number', seconds: NaN },
    { case: 'below a millisecond', seconds: 0.0001 },
  ])('rejects an interval that is not a positive duration, naming the field: $case', ({ seconds }) => {
    // Act
    const act = () => formatDuration(seconds, 'scrapeIntervalSeconds');

    // Assess
    expect(act).toThrow(PrometheusConfigError);
    expect(act).toThrow('scrapeIntervalSeconds');
  });
});

describe('Function: validateTargetGroups', () => {
  it('fills in the jobs that were left out', () => {
    // Act
    const groups = validateTargetGroups({
      vllm: [{ targets: ['127.0.0.1:8000'], labels: { namespace: 'default', pod: 'p', service: 's' } }],
    });

    // Assess
    expect(groups).toEqual({
      vllm: [{ targets: ['127.0.0.1:8000'], labels: { namespace: 'default', pod: 'p', service: 's' } }],
      'dcgm-exporter': [],
      'kubelet-cadvisor': [],
    });
  });

  it.each([
    { case: 'unknown job', groups: { vlm: [] }, field: 'targetGroups.vlm', accepted: 'vllm, dcgm-exporter' },
    { case: 'address without port', groups: { vllm: [{ targets: ['localhost'] }] }, field: 'targets[0]' },
    { case: 'port out of range', groups: { vllm: [{ targets: ['127.0.0.1:70000'] }] }, field: 'targets[0]' },
    { case: 'URL instead of address', groups: { vllm: [{ targets: ['http://127.0.0.1:80'] }] }, field: 'targets[0]' },
    {
      case: 'reserved label name',
      groups: { vllm: [{ targets: ['127.0.0.1:80'], labels: { __address__: 'x' } }] },
      field: 'labels.__address__',
    },
    {
      case: 'label name with a dash',
      groups: { vllm: [{ targets: ['127.0.0.1:80'], labels: { 'app-name': 'x' } }] },
      field: 'labels.app-name',
    },
  ])('rejects a bad target group, naming the field: $case', ({ groups, field, accepted }) => {
    // Act
    const act = () => validateTargetGroups(groups);

    // Assess
    expect(act).toThrow(PrometheusConfigError);
    expect(act).toThrow(field);
    if (accepted) expect(act).toThrow(accepted);
  });
});
