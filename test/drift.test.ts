import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatDriftCheck } from '../shared/drift/index.js';
import type { KubeObject } from '../shared/kube/index.js';
import {
  calibrateOnTwin,
  checkTwinDrift,
  serveTwinCalibrations,
  type Twin,
  type TwinCalibrationResult,
  twinDriftDetector,
} from '../sim/harness/index.js';
import { runCli } from './helpers/cli.js';
import { pollFor } from './helpers/poll.js';
import { backgroundLoad, FAST_TWIN_CALIBRATION, sleep, startDemoTwin } from './helpers/twin.js';

// Drift (issue 17, item 3) on the twin: a real calibration is the reference; then the live metrics under a steady
// load below the calibrated capacity say "no drift"; slowing every replica's decoding (a twin fault that leaves the
// Pod template alone) is found from the live metrics alone; and changing the Deployment's image or --max-num-seqs is
// found from the Pod template, with `vllm-pilot drift` exiting 1.

jest.setTimeout(300_000);

/** The live window read from AMP: the twin scrapes every second, so 15 s hold a trend. */
const WINDOW_SECONDS = 15;
/** Per Pod, below the calibration's stable 10 req/s step (so its p95 is the reference) and far below its capacity. */
const RATE_PER_POD = 8;

let twin: Twin;
let scratch: string;
let stateFile: string;
let calibration: TwinCalibrationResult;

/** The test's calibration input, for the first calibration and the re-calibration alike. */
const CALIBRATION = FAST_TWIN_CALIBRATION;
let load: { stop(): Promise<void> } | undefined;

function steadyLoad(): { stop(): Promise<void> } {
  return backgroundLoad(twin, RATE_PER_POD * twin.state.replicas.length);
}

async function editDeployment(edit: (container: { image: string; args: string[] }) => void): Promise<void> {
  const ref = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: twin.state.namespace,
    name: twin.state.deployment,
  };
  const live = await twin.cluster.get(ref);
  if (live === undefined) throw new Error('the Deployment is gone');
  const copy = structuredClone(live) as KubeObject & {
    spec: { template: { spec: { containers: Array<{ image: string; args: string[] }> } } };
  };
  const container = copy.spec.template.spec.containers[0];
  if (container === undefined) throw new Error('the Deployment has no container');
  edit(container);
  await twin.cluster.replace(copy);
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'vllm-pilot-drift-'));
  stateFile = join(scratch, 'twin.json');
  twin = await startDemoTwin({}, stateFile);
  serveTwinCalibrations(twin, { reportsDir: scratch, waitScale: 0.25, retryIntervalMs: 10 });
  calibration = await calibrateOnTwin(twin.state, {
    input: CALIBRATION,
    executionName: 'calib-drift',
    reportsDir: scratch,
    waitScale: 0.25,
    retryIntervalMs: 10,
  });
}, 240_000);

afterAll(async () => {
  await load?.stop();
  twin?.faults.clear();
  await twin?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('Drift: the twin compared with its last calibration', () => {
  it('finds no drift under a steady load below the calibrated capacity', async () => {
    // Prepare
    load = steadyLoad();
    await sleep((WINDOW_SECONDS + 5) * 1000);

    // Act
    const check = await checkTwinDrift(twin.state, { windowSeconds: WINDOW_SECONDS });

    // Assess
    expect(check.calibration).toEqual({
      execution: 'calib-drift',
      finishedAt: calibration.report.provenance.finishedAt,
      capacityPerPodRps: calibration.report.analysis.capacityRps?.value,
    });
    expect(check.findings).toEqual([]);
    expect(check.live.pods).toBe(2);
    expect(check.live.completedPerPodRps).toBeGreaterThan(RATE_PER_POD * 0.8);
    expect(check.live.p95E2eSeconds).not.toBeNull();
  });

  it('finds a replica slowed down (decoding 4x slower) from the live metrics alone, the Pod template unchanged', async () => {
    // Act
    for (const replica of twin.state.replicas)
      twin.faults.inject({ kind: 'slow-decoding', pod: replica.name, factor: 4 });
    const check = await pollFor(
      'a drift finding from live metrics',
      async () => {
        const c = await checkTwinDrift(twin.state, { windowSeconds: WINDOW_SECONDS });
        return c.findings.length > 0 && (c.live.p95E2eSeconds ?? 0) > 0 ? c : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 2_000 },
    );
    twin.faults.clear();
    process.stdout.write(formatDriftCheck(check));

    // Assess: latency (and maybe capacity) findings, no template finding, each with its figures.
    const kinds = check.findings.map((f) => f.kind);
    expect(kinds).not.toContain('template');
    expect(kinds).toContain('latency');
    expect(check.findings.find((f) => f.kind === 'latency')?.evidence).toMatch(
      /^p95 [\d.]+ s over the last 15 s at [\d.]+ req\/s per Pod, above 1\.5 × the [\d.]+ s calibration calib-drift measured at 10 req\/s per Pod/,
    );
  });

  it('finds a changed image and --max-num-seqs in the Pod template, and `vllm-pilot drift` exits 1 naming them', async () => {
    // Prepare
    await load?.stop();
    load = undefined;
    await editDeployment((container) => {
      container.image = 'vllm/vllm-openai:v0.11.1';
      const at = container.args.indexOf('--max-num-seqs');
      if (at >= 0) container.args[at + 1] = '16';
      else container.args.push('--max-num-seqs', '16');
    });

    // Act
    const check = await checkTwinDrift(twin.state, { windowSeconds: WINDOW_SECONDS });
    const cli = await runCli(['drift', '--state-file', stateFile, '--window', String(WINDOW_SECONDS)]);

    // Assess
    const template = check.findings.find((f) => f.kind === 'template');
    expect(template?.evidence).toContain('image: vllm/vllm-openai:v0.11.0 → vllm/vllm-openai:v0.11.1');
    expect(template?.evidence).toMatch(/--max-num-seqs: \S+ → 16/);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(
      /^Target twin-demo: compared with calibration calib-drift of \S+ \(capacity [\d.]+ req\/s per Pod\)\nDRIFT/,
    );
    expect(cli.stdout).toContain(
      '- template: the Pod template changed since calibration calib-drift: image: vllm/vllm-openai:v0.11.0 → vllm/vllm-openai:v0.11.1',
    );
  });

  it('the drift detector notifies with the evidence, and in auto mode re-calibrates through Step Functions to the end', async () => {
    // Prepare: the Pod template changed in the test above; the maintenance window is always open.
    const published = () =>
      twin.sns.messages(twin.state.aws.preflightTopicArn).filter((m) => (m.subject ?? '').startsWith('[DRIFT]'));
    const notify = twinDriftDetector(twin.state, { drift: { mode: 'notify', windowSeconds: 60 } });
    const auto = twinDriftDetector(twin.state, {
      drift: {
        mode: 'auto',
        windowSeconds: 60,
        maintenanceWindow: { start: '00:00', end: '24:00' },
        calibration: CALIBRATION,
      },
    });

    // Act
    const notified = await notify();
    await twin.sns.flush();
    const started = await auto();
    const whileRunning = await auto();
    await twin.stepFunctions.settled();
    const after = await checkTwinDrift(twin.state, { windowSeconds: WINDOW_SECONDS });
    const recalibrated = after.calibration?.capacityPerPodRps ?? Number.NaN;
    const again = await auto();

    // Assess: notify mode published the finding with its evidence.
    expect(notified.targets[0]).toMatchObject({ action: { kind: 'notified', reason: 'mode notify: notify only' } });
    const message = published()[0];
    // The template finding comes first; the 60 s window may still hold the slowed decoding of the test above, and a
    // latency finding from it is true evidence too (the subject then ends ", latency").
    expect(message?.subject).toMatch(/^\[DRIFT\] twin-demo: template(, latency)?$/);
    const body = JSON.parse(message?.message ?? '{}') as { findings: Array<{ kind: string; evidence: string }> };
    expect(body.findings[0]?.kind).toBe('template');
    expect(body.findings[0]?.evidence).toContain('image: vllm/vllm-openai:v0.11.0 → vllm/vllm-openai:v0.11.1');
    // Auto mode started one re-calibration, refused a second while it ran, and it completed.
    const action =
      'action' in (started.targets[0] ?? {})
        ? (started.targets[0] as { action: { kind: string; executionName?: string } }).action
        : undefined;
    expect(action).toMatchObject({
      kind: 'recalibrationStarted',
      executionName: expect.stringMatching(/^drift-twin-demo-\d{8}T\d{6}$/),
    });
    expect(whileRunning.targets[0]).toMatchObject({
      action: { kind: 'notified', reason: `re-calibration ${action?.executionName} of this target still runs` },
    });
    expect(twin.stepFunctions.executions().map((e) => [e.name, e.status])).toEqual([
      [action?.executionName, 'SUCCEEDED'],
    ]);
    // The new calibration measured the changed template: no drift any more, and nothing started again.
    expect(after.calibration?.execution).toBe(action?.executionName);
    expect(after.findings).toEqual([]);
    // --max-num-seqs 16 instead of 32: the re-calibration measured a lower capacity than the first one.
    expect(recalibrated).toBeLessThan(calibration.report.analysis.capacityRps?.value ?? 0);
    // A run after it finds no template drift and starts nothing (the live window may still hold the slowed decoding
    // of the test above: a latency finding then waits for the cooldown).
    const againCheck = (again.targets[0] as { check?: { findings: Array<{ kind: string }> } }).check;
    expect(againCheck?.findings.map((f) => f.kind)).not.toContain('template');
    expect(twin.stepFunctions.executions()).toHaveLength(1);
  });
});
