import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CalibrationReport } from '../shared/calibration/index.js';
import { EXECUTION_LABEL, executionNames } from '../shared/calibration/workflow/index.js';
import type { KubeObject } from '../shared/kube/index.js';
import {
  measureCapacity,
  startTwinCalibration,
  withTwinTarget,
  type Twin,
  type WorkflowOutcome,
} from '../sim/harness/index.js';
import { FAST_TWIN_CALIBRATION, startDemoTwin } from './helpers/twin.js';

// A calibration whose load looks like traffic: prompt and output lengths drawn from distributions (seeded), answers
// streamed, and the k6 Jobs placed and sized by the input. On the demo twin, its measured capacity must agree with
// `vllm-pilot twin capacity` for the same mix (the engine model fed the same drawn sequence), and its report must show
// the mix it sent and k6's time to first token.

const LONG = 400_000;
const NAME = 'calib-mix-streamed';

/** Short prompts and answers of mixed length: the demo replica stays bound by --max-num-seqs (32), not its KV cache. */
const REQUEST = {
  promptTokens: { distribution: 'uniform', min: 20, max: 60 },
  maxTokens: {
    distribution: 'histogram',
    buckets: [
      { tokens: 16, weight: 1 },
      { tokens: 32, weight: 2 },
      { tokens: 48, weight: 1 },
    ],
  },
  seed: 7,
  stream: true,
} as const;

const K6_POD = {
  // Streaming needs a k6 built with xk6-sse: the twin runs its k6 emulation for the product's k6 container anyway.
  image: '123456789012.dkr.ecr.us-east-2.amazonaws.com/k6-sse:0.54.0',
  resources: { requests: { cpu: '2', memory: '2Gi' }, limits: { memory: '3Gi' } },
  nodeSelector: { 'karpenter.sh/nodepool': 'load-test' },
  tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'load', effect: 'NoSchedule' }],
  imagePullSecrets: ['ecr-pull'],
};

let twin: Twin;
let reportsDir: string;
let outcome: WorkflowOutcome;
let report: CalibrationReport;
/** The first load Job of the run, as the API server held it. */
let loadJob: KubeObject | undefined;

beforeAll(async () => {
  twin = await startDemoTwin();
  reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-mix-'));
  const calibration = await startTwinCalibration(twin.state, {
    input: withTwinTarget(
      {
        ...FAST_TWIN_CALIBRATION,
        deploy: { mode: 'adopt' },
        request: REQUEST,
        k6: K6_POD,
        // Held in full: a step that ends early has its Job stopped before k6 prints its summary (no TTFT, no lengths).
        plan: { rates: [10, 40], holdSeconds: 8, restSeconds: 1, earlyStop: { enabled: false } },
      },
      twin.state,
    ),
    executionName: NAME,
    reportsDir,
    ports: { cluster: () => Promise.resolve(twin.cluster) },
    waitScale: 0.25,
    retryIntervalMs: 10,
    onEvent: (event) => {
      if (loadJob !== undefined || event.type !== 'StateEntered') return;
      void twin.cluster
        .list({
          apiVersion: 'batch/v1',
          kind: 'Job',
          namespace: twin.profile.namespace,
          labelSelector: { [EXECUTION_LABEL]: executionNames(NAME).label },
        })
        .then((jobs) => {
          loadJob ??= jobs.find((job) => job.metadata.labels?.['app.kubernetes.io/component'] === 'load');
        });
    },
  });
  try {
    outcome = await calibration.run.result;
  } finally {
    calibration.close();
  }
  const output = (outcome.status === 'succeeded' ? outcome.output : {}) as { report?: { reportLocation: string } };
  report = JSON.parse(await readFile(output.report?.reportLocation ?? '', 'utf8')) as CalibrationReport;
}, LONG);

afterAll(async () => {
  await twin?.stop();
  if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
});

describe('Calibration: a request mix, streamed, with k6 Job settings', () => {
  it('measures a capacity within 5 % of `vllm-pilot twin capacity` for the same mix', () => {
    // Prepare: what `twin capacity --request` computes (the engine model fed the k6 script's drawn sequence).
    const mix = report.provenance.requestMix;
    expect(mix).toEqual({
      seed: 7,
      prompt: REQUEST.promptTokens,
      output: REQUEST.maxTokens,
    });
    const expected = measureCapacity(twin.profile, report.provenance.requestShape, { mix: mix! }).capacityRps;

    // Assess
    expect(outcome.status).toBe('succeeded');
    const measured = report.analysis.capacityRps?.value ?? Number.NaN;
    const off = Math.abs(measured - expected) / expected;
    // On failure: both figures and how the measured one was derived.
    expect(off <= 0.05 ? 'within 5 %' : { off, measured, expected, how: report.analysis.capacityRps }).toBe(
      'within 5 %',
    );
  });

  it('reports the mix it sent: the distributions, and mean lengths near their expected values', () => {
    // Assess
    const sent = report.analysis.sent;
    expect(sent).toMatchObject({
      promptTokens: { distribution: 'uniform 20-60 (mean 40)', expected: 40 },
      maxTokens: { distribution: 'histogram 16×1, 32×2, 48×1 (mean 32)', expected: 32 },
      seed: 7,
      stream: true,
    });
    expect(sent?.requests).toBeGreaterThan(200);
    // vLLM answers max_tokens exactly; the prompt is padded to the drawn length as the twin counts tokens.
    expect(Math.abs((sent?.achieved?.completionTokensMean ?? 0) - 32)).toBeLessThan(2);
    expect(Math.abs((sent?.achieved?.promptTokensMean ?? 0) - 40)).toBeLessThan(3);
  });

  it("reports k6's time to first token (p50 / p95) beside vLLM's from AMP", () => {
    // Assess: the stable step answers within a few engine steps; its TTFT is well below its end-to-end latency.
    const stable = report.steps.find((s) => !s.verdict.saturated);
    const ttft = stable?.k6?.ttftMs;
    expect(ttft?.med).toBeGreaterThan(0);
    expect(ttft?.p95).toBeGreaterThanOrEqual(ttft?.med ?? Infinity);
    expect(ttft?.p95).toBeLessThan(stable?.k6?.httpReqDurationMs.p95 ?? 0);
    expect(stable?.k6?.itlMs?.avg).toBeGreaterThan(0);
    expect(stable?.amp.p95TtftSeconds).not.toBeNull();
  });

  it("renders the input's k6 Pod settings into the load Job", () => {
    // Assess
    const pod = (loadJob?.spec as { template: { spec: Record<string, unknown> } } | undefined)?.template.spec;
    expect(pod).toMatchObject({
      nodeSelector: K6_POD.nodeSelector,
      tolerations: K6_POD.tolerations,
      imagePullSecrets: [{ name: 'ecr-pull' }],
      containers: [{ name: 'k6', image: K6_POD.image, resources: K6_POD.resources }],
    });
  });
});
