import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { ConfigInvalidError } from '../../config/index.js';
import {
  DEFAULT_ALERT_SETTINGS,
  DEFAULT_REPEAT_INTERVAL_SECONDS,
  parseAlertSettings,
  parseAlertTargets,
  parseDurationSeconds,
} from './settings.js';

/** The ConfigInvalidError `act` throws. */
function errorOf(act: () => unknown): ConfigInvalidError {
  try {
    act();
  } catch (error) {
    if (error instanceof ConfigInvalidError) return error;
    throw error;
  }
  throw new Error('expected a ConfigInvalidError');
}

describe('Function: parseDurationSeconds', () => {
  it.each([
    { text: '30s', expected: 30 },
    { text: '2m', expected: 120 },
    { text: '1h30m', expected: 5400 },
    { text: '4h', expected: 14_400 },
    { text: '1w', expected: 604_800 },
    { text: '0s', expected: 0 },
    { text: '1500ms', expected: undefined },
    { text: '2000ms', expected: 2 },
    { text: '2x', expected: undefined },
    { text: '30', expected: undefined },
    { text: 'm2', expected: undefined },
    { text: '', expected: undefined },
  ])('"$text" → $expected', ({ text, expected }) => {
    // Act
    const seconds = parseDurationSeconds(text);

    // Assess
    expect(seconds).toBe(expected);
  });
});

describe('Function: parseAlertSettings', () => {
  it("gives the guide's defaults for no settings", () => {
    // Act
    const settings = parseAlertSettings(undefined);

    // Assess
    expect(settings).toEqual(DEFAULT_ALERT_SETTINGS);
    expect(settings.repeatIntervalSeconds).toBe(DEFAULT_REPEAT_INTERVAL_SECONDS);
    expect(settings.rules).toEqual({
      VLLMHighQueueDepth: { enabled: true, threshold: 50, forSeconds: 120, windowSeconds: 0, keepFiringForSeconds: 90 },
      VLLMHighLatency: { enabled: true, threshold: 5, forSeconds: 120, windowSeconds: 300, keepFiringForSeconds: 90 },
      VLLMGPUMemoryCritical: {
        enabled: true,
        threshold: 0.95,
        forSeconds: 60,
        windowSeconds: 0,
        keepFiringForSeconds: 90,
      },
      VLLMKVCacheFull: { enabled: true, threshold: 0.95, forSeconds: 30, windowSeconds: 0, keepFiringForSeconds: 90 },
      VLLMPreemptionSpike: { enabled: true, threshold: 5, forSeconds: 0, windowSeconds: 300, keepFiringForSeconds: 90 },
      VLLMKVCacheHigh: { enabled: true, threshold: 0.8, forSeconds: 120, windowSeconds: 0, keepFiringForSeconds: 90 },
      VLLMMetricsAbsent: { enabled: true, threshold: 0, forSeconds: 300, windowSeconds: 0, keepFiringForSeconds: 0 },
    });
  });

  it('applies what the user wrote and keeps the defaults elsewhere', () => {
    // Prepare
    const input = {
      repeatInterval: '10s',
      dashboardUrl: 'https://grafana.example.com/d/vllm',
      runbookBaseUrl: 'https://wiki.example.com/vllm',
      rules: {
        VLLMHighLatency: { threshold: 2.5, for: '3m', window: '10m', keepFiringFor: '2m' },
        VLLMPreemptionSpike: { enabled: false },
      },
    };

    // Act
    const settings = parseAlertSettings(input);

    // Assess
    expect(settings.repeatIntervalSeconds).toBe(10);
    expect(settings.dashboardUrl).toBe('https://grafana.example.com/d/vllm');
    expect(settings.runbookBaseUrl).toBe('https://wiki.example.com/vllm');
    // A threshold written down is pinned: a calibration's derived one never replaces it.
    expect(settings.rules.VLLMHighLatency).toEqual({
      enabled: true,
      threshold: 2.5,
      forSeconds: 180,
      windowSeconds: 600,
      keepFiringForSeconds: 120,
      thresholdPinned: true,
    });
    expect(settings.rules.VLLMPreemptionSpike.enabled).toBe(false);
    expect(settings.rules.VLLMKVCacheFull).toEqual(DEFAULT_ALERT_SETTINGS.rules.VLLMKVCacheFull);
  });

  it('does not share state with the defaults', () => {
    // Act
    const settings = parseAlertSettings({});
    settings.rules.VLLMKVCacheFull.threshold = 0.5;

    // Assess
    expect(DEFAULT_ALERT_SETTINGS.rules.VLLMKVCacheFull.threshold).toBe(0.95);
  });

  it.each([
    {
      case: 'an unknown alert name',
      input: { rules: { VLLMQueueDepth: {} } },
      path: 'alerts.rules',
      message: 'unknown key "VLLMQueueDepth"; accepted: VLLMHighQueueDepth, VLLMHighLatency',
    },
    {
      case: 'an unknown top-level key',
      input: { repeat: '4h' },
      path: 'alerts',
      message: 'unknown key "repeat"; accepted: repeatInterval, dashboardUrl, runbookBaseUrl, rules',
    },
    {
      case: 'an unknown rule key',
      input: { rules: { VLLMKVCacheFull: { treshold: 0.9 } } },
      path: 'alerts.rules.VLLMKVCacheFull',
      message: 'unknown key "treshold"; accepted: enabled, threshold, for, window, keepFiringFor',
    },
    {
      case: 'a keep-firing time in minutes without a unit',
      input: { rules: { VLLMKVCacheFull: { keepFiringFor: 1 } } },
      path: 'alerts.rules.VLLMKVCacheFull.keepFiringFor',
      message: 'must be a string; accepted: a PromQL duration',
    },
    {
      case: 'a duration without a unit',
      input: { rules: { VLLMHighLatency: { for: '120' } } },
      path: 'alerts.rules.VLLMHighLatency.for',
      message: '"120" is not valid; accepted: "0s" or a PromQL duration',
    },
    {
      case: 'a zero repeat interval',
      input: { repeatInterval: '0s' },
      path: 'alerts.repeatInterval',
      message: '"0s" is not valid',
    },
    {
      case: 'a ratio written in percent',
      input: { rules: { VLLMKVCacheFull: { threshold: 95 } } },
      path: 'alerts.rules.VLLMKVCacheFull.threshold',
      message: 'accepted: a 0-1 fraction (0.95 means 95 %)',
    },
    {
      case: 'a threshold on the absent rule (it has none to tune)',
      input: { rules: { VLLMMetricsAbsent: { threshold: 1 } } },
      path: 'alerts.rules.VLLMMetricsAbsent.threshold',
      message:
        'VLLMMetricsAbsent has no threshold to set (it fires when the series are absent); accepted: enabled and for',
    },
    {
      case: 'a window on a gauge rule',
      input: { rules: { VLLMHighQueueDepth: { window: '5m' } } },
      path: 'alerts.rules.VLLMHighQueueDepth.window',
      message: 'accepted only for VLLMHighLatency, VLLMPreemptionSpike',
    },
    {
      case: 'a negative threshold',
      input: { rules: { VLLMHighQueueDepth: { threshold: -1 } } },
      path: 'alerts.rules.VLLMHighQueueDepth.threshold',
      message: 'must be a finite number >= 0',
    },
    {
      case: 'a threshold given as text',
      input: { rules: { VLLMHighQueueDepth: { threshold: '50' } } },
      path: 'alerts.rules.VLLMHighQueueDepth.threshold',
      message: 'must be a number',
    },
    {
      case: 'a dashboard URL that is not http(s)',
      input: { dashboardUrl: 'grafana/d/vllm' },
      path: 'alerts.dashboardUrl',
      message: 'accepted: an http or https URL',
    },
    {
      case: 'a runbook base URL with a fragment',
      input: { runbookBaseUrl: 'https://wiki.example.com/vllm#alerts' },
      path: 'alerts.runbookBaseUrl',
      message: 'must not contain "#"',
    },
    {
      case: 'settings that are not an object',
      input: 'all',
      path: 'alerts',
      message: 'must be an object with the keys repeatInterval',
    },
  ])('refuses $case, naming the path and what is accepted', ({ input, path, message }) => {
    // Act
    const error = errorOf(() => parseAlertSettings(input));

    // Assess
    expect(error.issues).toContainEqual({ path, message: expect.stringContaining(message) as unknown as string });
  });

  it('uses the given path in its messages', () => {
    // Act
    const error = errorOf(() => parseAlertSettings({ rules: { VLLMX: {} } }, 'targets[2].alerts'));

    // Assess
    expect(error.message).toContain('targets[2].alerts.rules: unknown key "VLLMX"');
  });
});

describe('Function: parseAlertTargets', () => {
  const yaml = [
    '- name: prod-ministral',
    '  cluster: prod',
    '  namespace: llm',
    '  deployment: ministral',
    '  model: mistralai/Ministral-8B-Instruct-2410',
    '  alerts:',
    '    rules: { VLLMHighLatency: { threshold: 2.5 } }',
    '- name: staging',
    '  cluster: staging',
    '  namespace: llm',
    '  deployment: ministral',
    '  model: ministral',
  ].join('\n');

  it('reads targets with and without alert settings, as parsed from a YAML file', () => {
    // Act
    const targets = parseAlertTargets(parseYaml(yaml));

    // Assess
    expect(targets.map((t) => t.target.name)).toEqual(['prod-ministral', 'staging']);
    expect(targets[0]?.target).toEqual({
      name: 'prod-ministral',
      cluster: 'prod',
      namespace: 'llm',
      deployment: 'ministral',
      model: 'mistralai/Ministral-8B-Instruct-2410',
    });
    expect(targets[0]?.settings.rules.VLLMHighLatency.threshold).toBe(2.5);
    expect(targets[1]?.settings).toEqual(DEFAULT_ALERT_SETTINGS);
  });

  it('reads the JSON form the collector takes', () => {
    // Act
    const targets = parseAlertTargets(
      JSON.stringify([{ name: 'a', cluster: 'c', namespace: 'ns', deployment: 'd', model: 'm' }]),
    );

    // Assess
    expect(targets).toHaveLength(1);
  });

  it('reports every bad field of every target at once', () => {
    // Prepare
    const input = [
      { name: 'a', cluster: 'c', namespace: 'NS', deployment: 'd', model: 'm' },
      { name: 'b', cluster: 'c', namespace: 'ns', deployment: 'd', model: 'm', alerts: { rules: { Nope: {} } } },
    ];

    // Act
    const error = errorOf(() => parseAlertTargets(input));

    // Assess
    expect(error.issues.map((issue) => issue.path)).toEqual(['targets[0].namespace', 'targets[1].alerts.rules']);
  });

  it.each([
    { case: 'text that is not JSON', input: 'a: [', message: 'is not valid JSON' },
    { case: 'an object instead of a list', input: { name: 'a' }, message: 'must be a JSON array of targets' },
  ])('refuses $case', ({ input, message }) => {
    // Act
    const error = errorOf(() => parseAlertTargets(input));

    // Assess
    expect(error.message).toContain(message);
  });
});
