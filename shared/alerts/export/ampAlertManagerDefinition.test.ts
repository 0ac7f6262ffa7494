import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { AlertExportInvalidError } from '../errors.js';
import { ALERT_MESSAGE_ATTRIBUTES } from '../message.js';
import { ampAlertManagerDefinition } from './ampAlertManagerDefinition.js';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:vllm-eks-pilot-alerts';

interface Definition {
  template_files: Record<string, string>;
  alertmanager_config: string;
}
interface AlertmanagerConfig {
  route: { receiver: string; group_by: string[]; repeat_interval: string };
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
    expect(template.startsWith('{{ define "sns.default.message" }}')).toBe(true);
    for (const field of ['version', 'alertname', 'severity', 'status', 'labels', 'value', 'threshold', 'startsAt'])
      expect(template).toContain(`"${field}": `);
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
