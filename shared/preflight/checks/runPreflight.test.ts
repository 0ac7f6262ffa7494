import { describe, expect, it } from '@jest/globals';
import { formatPreflightReport } from '../format.js';
import { checkById, PREFLIGHT_CHECKS } from './registry.js';
import { runPreflight } from './runPreflight.js';
import { DEFAULT_PREFLIGHT_SETTINGS, parsePreflightSettings } from '../settings.js';
import { FakeMetrics, preparedContext } from '../testing/fakes.js';
import { CHECK_IDS, type PreflightCheck } from '../types.js';

describe('Function: runPreflight', () => {
  it('passes all eleven checks on a fully prepared deployment, in the guide order', async () => {
    // Act
    const report = await runPreflight(preparedContext());

    // Assess
    expect(report.results.map((r) => `${r.item} ${r.id} ${r.status}`)).toEqual(
      Object.values(CHECK_IDS).map((id, i) => `${i + 1} ${id} pass`),
    );
    expect(report.counts).toEqual({ pass: 11, warn: 0, fail: 0 });
    expect(report.status).toBe('pass');
    expect(report.checkedAt).toBe('2025-06-02T08:00:00.000Z');
  });

  it('turns a check that throws into a fail naming the error, and still runs the others', async () => {
    // Prepare
    const metrics = new FakeMetrics([
      { match: /DCGM/, samples: Object.assign(new Error('AMP down'), { name: 'MetricsHttpError' }) },
    ]);
    const context = preparedContext({ metrics });

    // Act
    const report = await runPreflight(context, [checkById('dcgm-exporter'), checkById('karpenter-do-not-disrupt')]);

    // Assess
    expect(report.results.map((r) => [r.id, r.status, r.reason])).toEqual([
      ['dcgm-exporter', 'fail', 'could not check: MetricsHttpError: AMP down'],
      ['karpenter-do-not-disrupt', 'pass', 'the Pod template has karpenter.sh/do-not-disrupt: "true"'],
    ]);
    expect(report.status).toBe('fail');
  });

  it.each([
    { case: 'a warn and a pass', statuses: ['warn', 'pass'] as const, expected: 'warn' },
    { case: 'a warn and a fail', statuses: ['warn', 'fail'] as const, expected: 'fail' },
  ])('sums up $case as $expected', async ({ statuses, expected }) => {
    // Prepare
    const checks: PreflightCheck[] = statuses.map((status, i) => ({
      ...(PREFLIGHT_CHECKS[i] as PreflightCheck),
      run: () => Promise.resolve({ status, reason: status, evidence: [] }),
    }));

    // Act
    const report = await runPreflight(preparedContext(), checks);

    // Assess
    expect(report.status).toBe(expected);
  });
});

describe('Function: formatPreflightReport', () => {
  it('prints one line per check with its status and reason, then the fixes and the totals', async () => {
    // Prepare
    const context = preparedContext({ metrics: new FakeMetrics() });
    const report = await runPreflight(context);

    // Act
    const text = formatPreflightReport(report);

    // Assess
    const lines = text.split('\n');
    expect(lines[0]).toBe(
      'Preflight of demo (vllm-twin default/vllm-inference-app, model ministral) at 2025-06-02T08:00:00.000Z',
    );
    expect(lines.filter((line) => /^ ?\d+ {3}(PASS|WARN|FAIL)/.test(line))).toHaveLength(11);
    expect(text).toMatch(/^ 7 {3}PASS\s+Karpenter do-not-disrupt annotation\s+the Pod template has/m);
    expect(text).toContain('Fixes:');
    expect(lines.at(-1)).toMatch(/^FAIL: \d+ passed, \d+ warned, \d+ failed$/);
  });
});

describe('Function: checkById', () => {
  it('refuses an unknown id, naming the known ones', () => {
    // Act
    const act = () => checkById('nope');

    // Assess
    expect(act).toThrow(/no preflight check "nope"; accepted: vllm-metrics-exposed, service-monitor-scraping/);
  });
});

describe('Function: parsePreflightSettings', () => {
  it('fills every default from an empty input', () => {
    // Act
    const settings = parsePreflightSettings(undefined);

    // Assess
    expect(settings).toEqual(DEFAULT_PREFLIGHT_SETTINGS);
  });

  it.each([
    {
      case: 'an unknown key',
      input: { freshness: 60 },
      message: /\(root\): unknown key\(s\) freshness; accepted: freshnessSeconds/,
    },
    { case: 'a negative freshness', input: { freshnessSeconds: -1 }, message: /freshnessSeconds: must be > 0/ },
    {
      case: 'a utilization above 1',
      input: { gpuMemoryUtilizationWarnAbove: 1.5 },
      message: /gpuMemoryUtilizationWarnAbove: must be <= 1/,
    },
    {
      case: 'a label without a name',
      input: { dashboardLabel: { name: '', value: '1' } },
      message: /dashboardLabel\.name: must not be empty/,
    },
  ])('refuses $case, naming the field', ({ input, message }) => {
    // Act
    const act = () => parsePreflightSettings(input, 'PREFLIGHT_SETTINGS');

    // Assess
    expect(act).toThrow(message);
    expect(act).toThrow(/^PREFLIGHT_SETTINGS is not valid/);
  });
});
