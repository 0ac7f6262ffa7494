import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_TEST_TIMEOUT_MS, runCli } from './helpers/cli.js';

// `vllm-pilot whatif` as a user runs it: the shipped 24-hour trace through three candidates on the demo profile.

jest.setTimeout(CLI_TEST_TIMEOUT_MS);

const TRACE = 'sim/whatif/traces/diurnal-24h.csv';
const REPORT = 'sim/whatif/fixtures/report-demo.json';
const SCALED_OBJECT = 'sim/whatif/fixtures/scaledobject-fast.yaml';

interface CandidateFigures {
  candidate: string;
  queuePerPod: number;
  p95Seconds: number;
  p95MetricType: string;
  sloAttainment: number;
  gpuHours: number;
  worstQueue: { waiting: number; atSecond: number };
  scalingEvents: number;
  pods: { min: number; max: number };
}

describe('Command: vllm-pilot whatif', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'whatif-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("replays a day through the guide's defaults, a calibration report and a ScaledObject file, and draws them", async () => {
    // Prepare
    const svg = join(dir, 'whatif.svg');

    // Act
    const result = await runCli([
      'whatif',
      '--trace',
      TRACE,
      '--candidate',
      'guide',
      '--candidate',
      `report:${REPORT}`,
      '--candidate',
      SCALED_OBJECT,
      '--profile',
      'demo',
      '--svg',
      svg,
      '--json',
    ]);

    // Assess
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as { trace: { seconds: number }; candidates: CandidateFigures[] };
    expect(out.trace.seconds).toBe(24 * 3600);
    const [guide, report, file] = out.candidates;
    expect(out.candidates.map((c) => c.candidate)).toEqual(['guide', `report:${REPORT}`, SCALED_OBJECT]);
    // What each candidate is: the guide's 25 per Pod and 5 s AverageValue; the report's 5 and 4.8 s Value; the file's.
    expect(guide).toMatchObject({ queuePerPod: 25, p95Seconds: 5, p95MetricType: 'AverageValue' });
    expect(report).toMatchObject({ queuePerPod: 5, p95Seconds: 4.8, p95MetricType: 'Value' });
    expect(file).toMatchObject({ queuePerPod: 3, p95Seconds: 4, p95MetricType: 'Value' });
    for (const c of out.candidates) {
      // The lunch peak (about 46 req/s) needs more than one replica of the demo's ~12 req/s.
      expect(c.pods.max).toBeGreaterThan(c.pods.min);
      expect(c.scalingEvents).toBeGreaterThan(0);
      expect(c.sloAttainment).toBeGreaterThan(0.5);
      expect(c.sloAttainment).toBeLessThanOrEqual(1);
      expect(c.gpuHours).toBeGreaterThanOrEqual(24 * c.pods.min);
      expect(c.gpuHours).toBeLessThanOrEqual(24 * c.pods.max);
    }
    // Lower thresholds react to the peak earlier than the guide's; two Pods kept warm cost at least 48 GPU-hours.
    expect(report?.sloAttainment ?? 0).toBeGreaterThan(guide?.sloAttainment ?? 1);
    expect(file?.pods.min).toBe(2);
    expect(file?.gpuHours ?? 0).toBeGreaterThan(guide?.gpuHours ?? Infinity);
    const chart = await readFile(svg, 'utf8');
    expect(chart.startsWith('<svg')).toBe(true);
    // One line for the offered rate, and one per candidate in the Pods and the p95 panels.
    expect(chart.match(/<polyline/g)?.length).toBe(1 + 2 * 3);
  });

  it('prints a table with a row per candidate, and a note when a report was calibrated with another shape', async () => {
    // Act: the fixture report was calibrated with max_tokens 100.
    const result = await runCli([
      'whatif',
      '--trace',
      TRACE,
      '--candidate',
      'guide',
      '--candidate',
      `report:${REPORT}`,
      '--profile',
      'demo',
      '--max-tokens',
      '32',
    ]);

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/candidate +queue\/Pod +p95 s \(type\) +Pods +SLO met +GPU-hours/);
    expect(result.stdout).toMatch(/^guide +25 +5 \(AverageValue\) +1-\d /m);
    expect(result.stdout).toContain(
      `Note: report:${REPORT} was calibrated with prompt 35, max_tokens 100; this replay uses prompt 35, max_tokens 32`,
    );
  });

  it('multiplies the trace by --rate-scale', async () => {
    // Act
    const runs = await Promise.all(
      ['1', '2'].map((scale) =>
        runCli([
          'whatif',
          '--trace',
          TRACE,
          '--candidate',
          'guide',
          '--profile',
          'demo',
          '--rate-scale',
          scale,
          '--json',
        ]),
      ),
    );

    // Assess
    const [single, double] = runs.map(
      (run) =>
        (JSON.parse(run.stdout) as { candidates: Array<{ offeredRequests: number; gpuHours: number }> }).candidates[0],
    );
    expect(double?.offeredRequests).toBeCloseTo(2 * (single?.offeredRequests ?? 0), -1);
    expect(double?.gpuHours ?? 0).toBeGreaterThan(single?.gpuHours ?? Infinity);
  });

  it.each([
    {
      case: 'a missing trace file',
      args: ['--trace', 'no/such.csv', '--candidate', 'guide'],
      stderr: /^vllm-pilot: CliFileInvalidError: --trace no\/such\.csv: cannot read it \(ENOENT\)$/,
    },
    {
      case: 'a trace row that is not a number',
      trace: 'seconds,rps\n0,1\n60,many\n',
      args: ['--candidate', 'guide'],
      stderr:
        /WhatIfTraceInvalidError: --trace .*bad\.csv line 3: rps "many"; expected a number of requests per second >= 0$/,
    },
    {
      case: 'a negative rate',
      trace: 'seconds,rps\n0,-1\n',
      args: ['--candidate', 'guide'],
      stderr: /line 2: rps "-1"/,
    },
    {
      case: 'an unknown candidate',
      args: ['--trace', TRACE, '--candidate', 'calibratd'],
      stderr: /CliOptionInvalidError: --candidate "calibratd": expected guide, report:FILE\.json/,
    },
    {
      case: 'a ScaledObject without the latency trigger',
      scaledObject: true,
      args: ['--trace', TRACE],
      stderr: /WhatIfCandidateInvalidError: --candidate .*so\.yaml: .*p95/,
    },
    {
      case: 'a report without thresholds',
      report: true,
      args: ['--trace', TRACE],
      stderr: /WhatIfCandidateInvalidError: --candidate report:.*r\.json: analysis\.thresholds: /,
    },
    {
      case: 'no candidate',
      args: ['--trace', TRACE],
      stderr: /required option '--candidate <spec>' not specified/,
    },
  ])('refuses $case with one line on stderr', async ({ args, trace, scaledObject, report, stderr }) => {
    // Prepare
    const extra: string[] = [];
    if (trace !== undefined) {
      const path = join(dir, 'bad.csv');
      await writeFile(path, trace);
      extra.push('--trace', path);
    }
    if (scaledObject) {
      const path = join(dir, 'so.yaml');
      const text = await readFile(SCALED_OBJECT, 'utf8');
      await writeFile(path, text.slice(0, text.indexOf('    - type: prometheus\n      metricType: Value')));
      extra.push('--candidate', path);
    }
    if (report) {
      const path = join(dir, 'r.json');
      await writeFile(path, JSON.stringify({ version: 1, analysis: { thresholds: null } }));
      extra.push('--candidate', `report:${path}`);
    }

    // Act
    const result = await runCli(['whatif', '--profile', 'demo', ...args, ...extra]);

    // Assess
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.includes('--help'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(stderr);
  });
});
