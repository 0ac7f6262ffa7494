import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { parseAlertTargets } from '../rules/index.js';
import { desiredAmpAlerting } from './desiredAmpAlerting.js';
import { sameAmpData } from './sameAmpData.js';

const target = (name: string, repeatInterval: string) => ({
  name,
  cluster: 'ai-eks',
  namespace: 'default',
  deployment: name,
  model: 'm',
  alerts: { repeatInterval },
});
const desired = desiredAmpAlerting({
  targets: parseAlertTargets(JSON.stringify([target('a', '4h'), target('b', '30m')])),
  namespace: 'vllm-eks-pilot-prod',
  topicArn: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-prod-alerts',
  topicRegion: 'us-east-2',
});
const definition = { kind: 'alertManagerDefinition' } as const;
const rules = desired.ruleGroupsNamespace.resource;

describe('Function: sameAmpData', () => {
  it.each([
    { name: 'the same text', held: desired.ruleGroupsNamespace.data, same: true },
    {
      name: 'the rules without their comments',
      held: desired.ruleGroupsNamespace.data.replace(/^#.*\n/gm, ''),
      same: true,
    },
    { name: 'a threshold changed', held: desired.ruleGroupsNamespace.data.replace('> 50', '> 60'), same: false },
    { name: 'text that is not YAML', held: 'groups: [', same: false },
  ])('compares rules: $name is the same: $same', ({ held, same }) => {
    expect(sameAmpData(rules, held, desired.ruleGroupsNamespace.data)).toBe(same);
  });

  it('compares the Alertmanager definition with its alertmanager_config string parsed (re-indented is the same)', () => {
    // Prepare: the same definition, its inner YAML written with other indentation.
    const value = parseYaml(desired.alertManagerDefinition.data) as { alertmanager_config: string };
    const reindented = JSON.stringify({
      ...value,
      alertmanager_config: JSON.stringify(parseYaml(value.alertmanager_config)),
    });

    // Assess
    expect(sameAmpData(definition, reindented, desired.alertManagerDefinition.data)).toBe(true);
    expect(reindented).toContain('30m');
    expect(sameAmpData(definition, reindented.replace('30m', '45m'), desired.alertManagerDefinition.data)).toBe(false);
  });
});

describe('Function: desiredAmpAlerting', () => {
  it('routes to the topic and repeats at the shortest repeatInterval of the targets (one route for all)', () => {
    // Act
    const config = parseYaml(
      (parseYaml(desired.alertManagerDefinition.data) as { alertmanager_config: string }).alertmanager_config,
    ) as { route: { repeat_interval: string }; receivers: Array<{ sns_configs: Array<{ topic_arn: string }> }> };

    // Assess
    expect(config.route.repeat_interval).toBe('30m');
    expect(config.receivers[0]?.sns_configs[0]?.topic_arn).toBe(
      'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-prod-alerts',
    );
    expect(desired.ruleGroupsNamespace.data).toContain('name: vllm-eks-pilot-alerts-a');
    expect(desired.ruleGroupsNamespace.data).toContain('name: vllm-eks-pilot-alerts-b');
  });
});
