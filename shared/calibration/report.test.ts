import { describe, expect, it } from '@jest/globals';
import { buildReport, renderSummaryText } from './report.js';
import { guideReport } from './testing/report.js';
import { classifyStep } from './measure.js';
import { buildSteps, GUIDE_STEP_SPECS, testInput, type StepSpec } from './testing/steps.js';
import type { StepEnding, StepMeasurement } from './types.js';

describe('Function: buildReport', () => {
  it('keeps the steps in the order they ran and is plain JSON', () => {
    // Prepare
    const report = guideReport();
    const shuffled = [...report.steps].reverse();

    // Act
    const rebuilt = buildReport(report.provenance, shuffled, report.analysis, report.change);

    // Assess
    expect(rebuilt.version).toBe(1);
    expect(rebuilt.steps.map((s) => s.rateRps)).toEqual([10, 20, 30, 40, 50, 60]);
    expect(JSON.parse(JSON.stringify(rebuilt))).toEqual(rebuilt);
  });
});

describe('Function: renderSummaryText', () => {
  it("tells the guide's result: saturation, last stable rate, capacity, thresholds with reasons, the change", () => {
    // Act
    const text = renderSummaryText(guideReport());

    // Assess
    expect(text).toContain(
      'Calibration of default/vllm-inference-app (model mistralai/Ministral-3-8B-Instruct-2512) in cluster ai-eks-docs',
    );
    expect(text).toContain('GPU 1 × NVIDIA-L40S (g6e.4xlarge)');
    expect(text).toContain('Saturation: 60 req/s (step 6)\n  - queue grew 5.6 req/s (max 350) at 60 req/s offered');
    expect(text).toContain('Last stable rate: 50 req/s');
    expect(text).toContain('Capacity of one replica: 55.8 req/s');
    expect(text).toMatch(
      /queue depth per Pod\s+> 25\n\s+formula: max\(activation \+ 1, floor\(R × maxQueueWaitSeconds\)\)/,
    );
    expect(text).toMatch(/p95 latency guardrail\s+> 5 s/);
    expect(text).toMatch(/scale in\s+queue = 0 and p95 < 3 s for 300 s/);
    expect(text).toContain('why: a queue of Q at one Pod holds about Q / R s of work');
    expect(text).toContain('ScaledObject default/vllm-inference-app: dry run, nothing applied');
    expect(text).toContain('  + queue threshold: "25"');
    // One table row per step, the saturated one marked.
    const rows = text.split('\n').filter((line) => /^\s+\d+\s+\d+\/s/.test(line));
    expect(rows).toHaveLength(6);
    expect(rows[5]).toMatch(
      /^\s+6\s+60\/s\s+54\.5\/s\s+150 \/ 350\s+5\.6\s+8 s\s+5\.1 s\s+9 %\s+100 %\s+60 s\s+SATURATED$/,
    );
    expect(rows[4]).toMatch(/stable$/);
  });

  it('says the capacity is a lower bound and lists the notes when saturation was not found', () => {
    // Prepare
    const input = testInput();
    const specs: StepSpec[] = [10, 20, 30].map((rate) => ({ rateRps: rate, amp: { completedRps: rate * 0.98 } }));
    specs[1] = { ...specs[1], rateRps: 20, k6: { httpReqFailed: 3 } };
    const report = guideReport({ input, steps: buildSteps(specs, input), change: null });

    // Act
    const text = renderSummaryText(report);

    // Assess
    expect(text).toContain(
      'Saturation: not found within the plan (no step saturated within the plan (highest rate 30 req/s))',
    );
    expect(text).toContain('Capacity of one replica: at least 29.4 req/s');
    expect(text).toContain('Notes:\n  - at 20 req/s 3 of 1200 k6 requests failed');
    expect(text).not.toContain('ScaledObject');
  });

  it('shows how long a step that ended early was held, and why it saturated', () => {
    // Prepare: the 60 req/s step was stopped after 18 s of its 60 s hold; its Job left no k6 summary.
    const input = testInput();
    const steps = buildSteps(GUIDE_STEP_SPECS, input);
    const last = steps[5] as StepMeasurement;
    const ending: StepEnding = {
      kind: 'saturated-early',
      reason: 'after 18 s of 60 s: queue slope 5.6 ± 0.3 req/s (SE, n = 10) is significantly above the limit',
      heldSeconds: 18,
      plannedHoldSeconds: 60,
      evidence: 'amp',
    };
    steps[5] = {
      ...last,
      holdSeconds: 18,
      k6: null,
      ending,
      verdict: classifyStep(last.amp, null, 60, input, 18, ending),
    };

    // Act
    const text = renderSummaryText(guideReport({ input, steps }));

    // Assess
    const rows = text.split('\n').filter((line) => /^\s+\d+\s+\d+\/s/.test(line));
    expect(rows[5]).toMatch(/\s-\s+18\/60 s, saturated early \(amp\)\s+SATURATED$/);
    expect(text).toContain('- the step was ended after 18 s of its 60 s hold at 60 req/s offered: after 18 s of 60 s');
  });

  it('says no thresholds were derived when even the first step saturated', () => {
    // Prepare
    const input = testInput();
    const steps = buildSteps([{ rateRps: 10, amp: { queueSlopePerSecond: 3, queueMax: 150, completedRps: 7 } }], input);

    // Act
    const text = renderSummaryText(guideReport({ input, steps, change: null }));

    // Assess
    expect(text).toContain('Last stable rate: none');
    expect(text).toContain('Thresholds: none derived (no stable step)');
  });
});

describe('Function: renderSummaryText (a request mix, streamed)', () => {
  it("shows the mix asked for, the mean lengths k6 saw, and k6's TTFT beside vLLM's from AMP", () => {
    // Prepare: two steps, each with k6's TTFT and token means (10 req/s × 60 s and 20 req/s × 60 s answered).
    const input = testInput({
      request: {
        promptTokens: { distribution: 'uniform', min: 100, max: 900 },
        maxTokens: {
          distribution: 'histogram',
          buckets: [
            { tokens: 64, weight: 3 },
            { tokens: 512, weight: 1 },
          ],
        },
        seed: 9,
        stream: true,
      },
      k6: { image: 'registry.example/k6-sse:0.54.0' },
    });
    const ttft = (med: number, p95: number) => ({ avg: med, min: 10, med, max: p95 * 2, p90: p95, p95, p99: p95 });
    const specs: StepSpec[] = [
      { rateRps: 10, k6: { ttftMs: ttft(80, 150), promptTokensAvg: 490, completionTokensAvg: 170 } },
      { rateRps: 20, k6: { ttftMs: ttft(120, 240), promptTokensAvg: 505, completionTokensAvg: 180 } },
    ];
    const report = guideReport({ input, steps: buildSteps(specs, input), change: null });

    // Act
    const text = renderSummaryText(report);

    // Assess
    expect(text).toContain('request shape: 500 prompt tokens, max_tokens 176 (expected lengths of the mix)');
    expect(text).toContain(
      'request mix: prompt uniform 100-900 (mean 500) tokens, max_tokens histogram 64×3, 512×1 (mean 176), seed 9, streamed',
    );
    // Weighted by answered requests: (490 × 600 + 505 × 1200) / 1800 = 500, (170 × 600 + 180 × 1200) / 1800 = 176.7.
    expect(text).toContain(
      'sent (k6): 1800 answered requests, mean prompt 500 tokens (expected 500), mean output 176.7 tokens (expected 176)',
    );
    expect(text).toMatch(/p95 ttft\s+k6 ttft p50\/p95/);
    const rows = text.split('\n').filter((line) => /^\s+\d+\s+\d+\/s/.test(line));
    expect(rows[1]).toContain('0.12 / 0.24 s');
    expect(report.analysis.sent).toMatchObject({ seed: 9, stream: true, requests: 1800 });
    expect(report.provenance.requestMix).toMatchObject({ seed: 9, prompt: { distribution: 'uniform' } });
  });
});

describe('Function: renderSummaryText (repeated steps)', () => {
  it('marks a step whose evidence failed as repeated and lists why, apart from the verdicts', () => {
    // Prepare: step 2 at 20 req/s failed its checks (AMP paused across its end) and was repeated as step 3.
    const input = testInput();
    const [a, b, c] = buildSteps(
      [{ rateRps: 10 }, { rateRps: 20, amp: { completedRps: 12.6 } }, { rateRps: 20 }],
      input,
    );
    const reason = "AMP's last sample of Pod vllm-a is 3.2 s before the window's end";
    const steps = [
      { ...a, evidence: { ok: true, reasons: [], attempt: 1 } },
      { ...b, evidence: { ok: false, reasons: [reason], attempt: 1 } },
      { ...c, evidence: { ok: true, reasons: [], attempt: 2 } },
    ] as StepMeasurement[];

    // Act
    const text = renderSummaryText(guideReport({ input, steps, change: null }));

    // Assess
    const rows = text.split('\n').filter((line) => /^\s+\d+\s+\d+\/s/.test(line));
    expect(rows[1]).toMatch(/repeated \(try 1\)$/);
    expect(rows[2]).toMatch(/stable$/);
    expect(text).toContain(
      `Repeated steps (their data could not be trusted; not used):\n  - step 2 at 20 req/s: ${reason}`,
    );
  });
});
