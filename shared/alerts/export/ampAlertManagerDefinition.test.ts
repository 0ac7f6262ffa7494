import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { AlertExportInvalidError } from '../errors.js';
import { ALERT_MESSAGE_ATTRIBUTES } from '../message.js';
import { ALERT_RULES } from '../rules/index.js';
import { ampAlertManagerDefinition, MESSAGE_LABELS } from './ampAlertManagerDefinition.js';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:vllm-eks-pilot-alerts';

interface Definition {
  template_files: Record<string, string>;
  alertmanager_config: string;
}
interface AlertmanagerConfig {
  route: { receiver: string; group_by: string[]; repeat_interval: string };
  inhibit_rules: Array<{ source_matchers: string[]; target_matchers: string[]; equal: string[] }>;
  receivers: Array<{
    name: string;
    sns_configs: Array<{
      topic_arn: string;
      sigv4: { region: string };
      send_resolved: boolean;
      subject: string;
      message: string;
      attributes: Record<string, string>;
    }>;
  }>;
}

function parse(text: string): { definition: Definition; config: AlertmanagerConfig } {
  const definition = parseYaml(text) as Definition;
  return { definition, config: parseYaml(definition.alertmanager_config) as AlertmanagerConfig };
}

describe('Function: ampAlertManagerDefinition', () => {
  it('routes every alert to one SNS receiver with its region, one alert per message', () => {
    // Act
    const { config } = parse(ampAlertManagerDefinition({ topicArn: TOPIC, region: 'us-east-1' }));

    // Assess
    expect(config.route).toMatchObject({ receiver: 'sns', group_by: ['...'], repeat_interval: '4h' });
    const sns = config.receivers[0]?.sns_configs[0];
    expect(sns).toMatchObject({ topic_arn: TOPIC, sigv4: { region: 'us-east-1' }, send_resolved: true });
    expect(sns?.message).toBe('{{ template "sns.default.message" . }}');
  });

  it('sets the message attributes subscription filter policies use, never empty', () => {
    // Act
    const { config } = parse(ampAlertManagerDefinition({ topicArn: TOPIC, region: 'us-east-1' }));

    // Assess
    const attributes = config.receivers[0]?.sns_configs[0]?.attributes ?? {};
    expect(Object.keys(attributes)).toEqual([...ALERT_MESSAGE_ATTRIBUTES]);
    expect(attributes.severity).toBe('{{ or (index .CommonLabels "severity") "none" }}');
    expect(attributes.status).toBe('{{ .Status }}');
  });

  it('defines the JSON message template with the fields of message v1', () => {
    // Act
    const { definition } = parse(ampAlertManagerDefinition({ topicArn: TOPIC, region: 'us-east-1' }));

    // Assess
    const template = definition.template_files.default_template ?? '';
    expect(template).toContain('{{ define "sns.default.message" }}');
    for (const field of ['version', 'alertname', 'severity', 'status', 'labels', 'value', 'threshold', 'startsAt'])
      expect(template).toContain(`"${field}": `);
  });

  it("sends the Lambda engine's subject, from a template of the definition", () => {
    // Act
    const { definition, config } = parse(ampAlertManagerDefinition({ topicArn: TOPIC, region: 'us-east-1' }));

    // Assess: rendered by amtool and compared with alertSubject() in shared/alerts/ampMessage.test.ts.
    expect(config.receivers[0]?.sns_configs[0]?.subject).toBe('{{ template "vllm.sns.subject" . }}');
    expect(definition.template_files.default_template).toContain('{{ define "vllm.sns.subject" }}');
  });

  it("puts in the message's labels the Lambda engine's: identifying labels, target, cluster and namespace", () => {
    // Act
    const labels = new Set(MESSAGE_LABELS);

    // Assess
    for (const rule of ALERT_RULES) for (const name of rule.identifyingLabels) expect(labels.has(name)).toBe(true);
    for (const name of ['target', 'cluster', 'namespace']) expect(labels.has(name)).toBe(true);
    for (const name of ['alertname', 'severity']) expect(labels.has(name)).toBe(false);
  });

  it('inhibits the KV-cache warning and the preemption spike of a Pod while its KV cache is full', () => {
    // Act
    const { config } = parse(ampAlertManagerDefinition({ topicArn: TOPIC, region: 'us-east-1' }));

    // Assess: the table the Lambda engine's decision stage applies (rules/inhibitions.ts), as Alertmanager reads it.
    expect(config.inhibit_rules).toEqual([
      {
        source_matchers: ['alertname="VLLMKVCacheFull"'],
        target_matchers: ['alertname=~"VLLMKVCacheHigh|VLLMPreemptionSpike"'],
        equal: ['target', 'namespace', 'pod'],
      },
    ]);
  });

  it('takes a shorter repeat interval', () => {
    // Act
    const { config } = parse(
      ampAlertManagerDefinition({ topicArn: TOPIC, region: 'us-east-1', repeatIntervalSeconds: 1800 }),
    );

    // Assess
    expect(config.route.repeat_interval).toBe('30m');
  });

  it.each([
    { case: 'a queue ARN', topicArn: 'arn:aws:sqs:us-east-1:123456789012:q', region: 'us-east-1', field: 'topicArn' },
    {
      case: 'a FIFO topic',
      topicArn: 'arn:aws:sns:us-east-1:123456789012:alerts.fifo',
      region: 'us-east-1',
      field: 'topicArn',
    },
    { case: 'another region than the topic', topicArn: TOPIC, region: 'eu-west-1', field: 'region' },
    { case: 'a made-up region', topicArn: TOPIC, region: 'mars', field: 'region' },
  ])('refuses $case', ({ topicArn, region, field }) => {
    // Act / Assess
    expect(() => ampAlertManagerDefinition({ topicArn, region })).toThrow(AlertExportInvalidError);
    expect(() => ampAlertManagerDefinition({ topicArn, region })).toThrow(`${field}: `);
  });

  it("refuses a repeat interval above AMP's 5 days", () => {
    // Act / Assess
    expect(() =>
      ampAlertManagerDefinition({ topicArn: TOPIC, region: 'us-east-1', repeatIntervalSeconds: 6 * 86_400 }),
    ).toThrow('AMP caps repeat_interval at 5 days');
  });
});
