import { describe, expect, it } from '@jest/globals';
import { parse, stringify } from 'yaml';
import {
  AmpDataRefusedError,
  checkRuleGroupsNamespaceData,
  parseAlertManagerDefinition,
  twinAlertmanagerConfig,
} from './ampData.js';

const SNS = { topic_arn: 'arn:aws:sns:us-east-2:000000000000:alerts', sigv4: { region: 'us-east-2' } };

/** A definition in AMP's shape: `alertmanager_config` is a YAML string inside the YAML file. */
function definition(config: object, extra: Record<string, unknown> = {}): string {
  return stringify({ ...extra, alertmanager_config: stringify(config) });
}

function refusal(act: () => unknown): string {
  try {
    act();
  } catch (error) {
    expect(error).toBeInstanceOf(AmpDataRefusedError);
    return (error as Error).message;
  }
  throw new Error('expected the data to be refused');
}

describe('Function: parseAlertManagerDefinition', () => {
  it('splits a definition into its Alertmanager config and its template files', () => {
    // Act
    const parts = parseAlertManagerDefinition(
      definition(
        { route: { receiver: 'sns' }, receivers: [{ name: 'sns', sns_configs: [SNS] }] },
        { template_files: { default_template: '{{ define "sns.default.message" }}x{{ end }}' } },
      ),
    );

    // Assess
    expect(parts.config).toEqual({ route: { receiver: 'sns' }, receivers: [{ name: 'sns', sns_configs: [SNS] }] });
    expect(parts.templateFiles).toEqual({ default_template: '{{ define "sns.default.message" }}x{{ end }}' });
  });

  it.each([
    // AMP keeps all Alertmanager configuration inside alertmanager_config.
    {
      case: 'a top-level route',
      text: stringify({ route: { receiver: 'x' } }),
      reason: /unknown top-level key\(s\) route/,
    },
    {
      case: 'no alertmanager_config',
      text: stringify({ template_files: {} }),
      reason: /alertmanager_config is required/,
    },
    { case: 'not YAML', text: 'alertmanager_config: [unclosed', reason: /not YAML/ },
    // SNS is the only receiver AMP supports.
    {
      case: 'a webhook receiver',
      text: definition({
        route: { receiver: 'w' },
        receivers: [{ name: 'w', webhook_configs: [{ url: 'http://x' }] }],
      }),
      reason: /receiver w: webhook_configs not supported/,
    },
    // AMP sets api_url and http_config itself.
    {
      case: 'an api_url',
      text: definition({
        route: { receiver: 's' },
        receivers: [{ name: 's', sns_configs: [{ ...SNS, api_url: 'x' }] }],
      }),
      reason: /api_url is not allowed/,
    },
    {
      case: 'an http_config',
      text: definition({
        route: { receiver: 's' },
        receivers: [{ name: 's', sns_configs: [{ ...SNS, http_config: {} }] }],
      }),
      reason: /http_config is not allowed/,
    },
    {
      case: 'no sigv4 region',
      text: definition({ route: { receiver: 's' }, receivers: [{ name: 's', sns_configs: [{ topic_arn: 'arn' }] }] }),
      reason: /sigv4.region is required/,
    },
    {
      case: 'no topic',
      text: definition({
        route: { receiver: 's' },
        receivers: [{ name: 's', sns_configs: [{ sigv4: { region: 'r' } }] }],
      }),
      reason: /topic_arn is required/,
    },
    {
      case: 'a template name with a directory',
      text: definition({ route: { receiver: 's' } }, { template_files: { '../x': 'y' } }),
      reason: /not a usable template name/,
    },
  ])('refuses what AMP refuses: $case', ({ text, reason }) => {
    // Act
    const message = refusal(() => parseAlertManagerDefinition(text));

    // Assess
    expect(message).toMatch(reason);
  });
});

describe('Function: twinAlertmanagerConfig', () => {
  it('points every SNS receiver at the twin’s SNS, keeps only the sigv4 region, and loads every template file', () => {
    // Prepare
    const parts = parseAlertManagerDefinition(
      definition({
        route: { receiver: 'sns' },
        receivers: [
          { name: 'sns', sns_configs: [{ ...SNS, sigv4: { region: 'us-east-2', role_arn: 'arn:aws:iam::1:role/x' } }] },
          { name: 'drop' },
        ],
        templates: ['default_template'],
      }),
    );

    // Act
    const config = parse(
      twinAlertmanagerConfig(parts, { snsEndpoint: 'http://127.0.0.1:9911', templateDir: '/tmp/am/templates' }),
    ) as Record<string, unknown>;

    // Assess
    expect(config).toEqual({
      route: { receiver: 'sns' },
      receivers: [
        { name: 'sns', sns_configs: [{ ...SNS, api_url: 'http://127.0.0.1:9911', sigv4: { region: 'us-east-2' } }] },
        { name: 'drop' },
      ],
      templates: ['/tmp/am/templates/*'],
    });
  });
});

describe('Function: checkRuleGroupsNamespaceData', () => {
  it.each([
    { case: 'not YAML', text: 'groups: [', reason: /not YAML/ },
    { case: 'no groups list', text: 'rules: []', reason: /must be a mapping with a `groups` list/ },
    {
      case: 'a group name too long beside the namespace',
      text: stringify({ groups: [{ name: 'g'.repeat(700), rules: [] }] }),
      reason: /723 UTF-8 bytes; at most 721/,
    },
  ])('refuses what AMP refuses: $case', ({ text, reason }) => {
    // Act
    const message = refusal(() => checkRuleGroupsNamespaceData('a'.repeat(23), text));

    // Assess
    expect(message).toMatch(reason);
  });

  it('accepts a rules file with groups', () => {
    // Act / Assess
    expect(() =>
      checkRuleGroupsNamespaceData(
        'ns',
        stringify({ groups: [{ name: 'g', rules: [{ alert: 'A', expr: 'vector(1)' }] }] }),
      ),
    ).not.toThrow();
  });
});
