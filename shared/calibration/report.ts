/**
 * The calibration report (JSON, stored with its chart and written to the history) and its human summary, which the
 * CLI and the demo print.
 */
import { fmt, pct } from './format.js';
import { sentLoadLines } from './sentLoad.js';
import type { CalibrationAnalysis, CalibrationReport, Provenance, StepMeasurement, ThresholdChange } from './types.js';

/** Assembles the report; the steps are kept in the order they ran. */
export function buildReport(
  provenance: Provenance,
  steps: readonly StepMeasurement[],
  analysis: CalibrationAnalysis,
  change: ThresholdChange | null,
): CalibrationReport {
  return {
    version: 1,
    provenance,
    steps: [...steps].sort((a, b) => a.index - b.index),
    analysis,
    change,
  };
}

/** The human summary: what was calibrated, the steps, saturation, last stable rate, capacity, thresholds, notes. */
export function renderSummaryText(report: CalibrationReport): string {
  const { provenance: p, analysis: a } = report;
  const lines: string[] = [];
  lines.push(`Calibration of ${p.namespace}/${p.deployment} (model ${p.model}) in cluster ${p.cluster}`);
  if (p.measuredOn !== undefined)
    lines.push(`Measured on its shadow copy ${p.measuredOn} (same Pod template; users stayed on ${p.deployment})`);
  lines.push(`  run ${p.executionName} (${p.executionId}), ${p.startedAt} to ${p.finishedAt}, strategy ${p.strategy}`);
  lines.push(`  image ${p.image || '(unknown)'}, GPU ${p.gpu ?? '(unknown)'}, Pod template ${p.podTemplateHash}`);
  lines.push(
    `  request shape: ${p.requestShape.promptTokens} prompt tokens, max_tokens ${p.requestShape.maxTokens}` +
      (p.requestMix === undefined ? '' : ' (expected lengths of the mix)') +
      (p.vllmArgs.length > 0 ? `; vLLM args: ${p.vllmArgs.join(' ')}` : ''),
  );
  if (a.sent !== undefined) lines.push(...sentLoadLines(a.sent));
  lines.push('');
  lines.push(...stepTable(report.steps));
  lines.push('');
  const repeated = [...report.steps].sort((x, y) => x.index - y.index).filter((s) => s.evidence?.ok === false);
  if (repeated.length > 0) {
    lines.push('Repeated steps (their data could not be trusted; not used):');
    for (const s of repeated)
      lines.push(`  - step ${s.index + 1} at ${fmt(s.rateRps)} req/s: ${(s.evidence?.reasons ?? []).join('; ')}`);
    lines.push('');
  }

  if (a.saturation.found) {
    lines.push(`Saturation: ${fmt(a.saturation.rateRps)} req/s (step ${a.saturation.stepIndex + 1})`);
    for (const reason of a.saturation.reasons) lines.push(`  - ${reason}`);
  } else {
    lines.push(`Saturation: not found within the plan (${a.saturation.reason})`);
  }
  lines.push(`Last stable rate: ${a.lastStableRps === null ? 'none' : `${fmt(a.lastStableRps)} req/s`}`);
  if (a.capacityRps === null) {
    lines.push('Capacity of one replica: unknown');
  } else {
    const bound = a.saturation.found ? '' : 'at least ';
    lines.push(`Capacity of one replica: ${bound}${fmt(a.capacityRps.value, 1)} req/s`);
    lines.push(`  ${a.capacityRps.formula}; ${a.capacityRps.reason}`);
  }
  lines.push('');

  const t = a.thresholds;
  if (t === null) {
    lines.push('Thresholds: none derived (no stable step)');
  } else {
    lines.push('Thresholds:');
    const scaleIn = t.scaleIn.value;
    const rows: Array<[string, string, { reason: string; formula: string }]> = [
      ['queue depth per Pod', `> ${t.queueDepthPerPod.value}`, t.queueDepthPerPod],
      ['queue activation', `${t.queueActivation.value}`, t.queueActivation],
      ['p95 latency guardrail', `> ${fmt(t.p95LatencySeconds.value, 1)} s`, t.p95LatencySeconds],
      [
        'scale in',
        `queue = ${scaleIn.queueDepth} and p95 < ${fmt(scaleIn.p95BelowSeconds, 1)} s for ${fmt(scaleIn.forSeconds)} s`,
        t.scaleIn,
      ],
    ];
    pushDerivedRows(lines, rows);
  }
  if (a.alerts) {
    lines.push('');
    lines.push("Alert thresholds (the alert evaluator uses them where the target's alert settings give none):");
    pushDerivedRows(lines, [
      ['VLLMHighQueueDepth', `> ${a.alerts.VLLMHighQueueDepth.value} waiting per Pod`, a.alerts.VLLMHighQueueDepth],
      ['VLLMHighLatency', `p95 > ${fmt(a.alerts.VLLMHighLatency.value, 1)} s`, a.alerts.VLLMHighLatency],
    ]);
  }

  const c = report.change;
  if (c !== null) {
    lines.push('');
    lines.push(
      `ScaledObject ${c.scaledObject.namespace}/${c.scaledObject.name}: ` +
        (c.applied ? 'thresholds applied' : 'dry run, nothing applied (set scaledObject.apply to apply)'),
    );
    for (const line of c.diff.split('\n').filter((l) => l !== '')) lines.push(`  ${line}`);
  }

  if (a.notes.length > 0) {
    lines.push('');
    lines.push('Notes:');
    for (const note of a.notes) lines.push(`  - ${note}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A derived value's rows: its name and value, then its formula and why. */
function pushDerivedRows(
  lines: string[],
  rows: ReadonlyArray<[string, string, { reason: string; formula: string }]>,
): void {
  for (const [name, value, derived] of rows) {
    lines.push(`  ${name.padEnd(22)} ${value}`);
    lines.push(`  ${''.padEnd(22)} formula: ${derived.formula}`);
    lines.push(`  ${''.padEnd(22)} why: ${derived.reason}`);
  }
}

/**
 * One row per step: offered and completed rate, queue, latency, KV cache, k6 drops and failures, how long it was
 * held (and why it ended early), verdict.
 */
function stepTable(steps: readonly StepMeasurement[]): string[] {
  // Streamed steps: k6's time to first token (client side, p50 / p95) beside vLLM's p95 from AMP.
  const streamed = steps.some((s) => s.k6?.ttftMs != null);
  const header = [
    'step',
    'offered',
    'completed',
    'queue mean/max',
    'slope/s',
    'p95 e2e',
    'p95 ttft',
    ...(streamed ? ['k6 ttft p50/p95'] : []),
    'KV max',
    'k6 ok',
    'held',
    'verdict',
  ];
  const rows = [...steps]
    .sort((x, y) => x.index - y.index)
    .map((s) => {
      const k6 = s.k6;
      const ok = k6 === null || k6.httpReqs === 0 ? '-' : pct((k6.httpReqs - k6.httpReqFailed) / k6.httpReqs, 1);
      return [
        String(s.index + 1),
        // With users beside the test, the offered rate is theirs plus k6's.
        s.k6RateRps === undefined ? `${fmt(s.rateRps)}/s` : `${fmt(s.rateRps)}/s (k6 ${fmt(s.k6RateRps)})`,
        `${fmt(s.amp.completedRps, 1)}/s`,
        `${fmt(s.amp.queueMean, 1)} / ${fmt(s.amp.queueMax, 0)}`,
        fmt(s.amp.queueSlopePerSecond, 2),
        seconds(s.amp.p95E2eSeconds),
        seconds(s.amp.p95TtftSeconds),
        ...(streamed ? [k6Ttft(s)] : []),
        pct(s.amp.kvCacheUsageMax, 0),
        k6 !== null && k6.droppedIterations > 0 ? `${ok}, ${k6.droppedIterations} dropped` : ok,
        held(s),
        // A step whose evidence failed was not judged (shared/calibration/evidence.ts): its verdict is not used.
        s.evidence?.ok === false
          ? `repeated (try ${s.evidence.attempt})`
          : s.verdict.saturated
            ? 'SATURATED'
            : 'stable',
      ];
    });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `  ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd();
  return [line(header), ...rows.map(line)];
}

/** k6's TTFT of a streamed step, `0.08 / 0.21 s`; `-` without one (an early-ended step has no summary). */
function k6Ttft(s: StepMeasurement): string {
  const ttft = s.k6?.ttftMs;
  return ttft == null ? '-' : `${fmt(ttft.med / 1000, 2)} / ${fmt(ttft.p95 / 1000, 2)} s`;
}

/** `60 s`, or `14/60 s, saturated early (k6)` for a step that ended before its hold, with the ending's evidence. */
function held(step: StepMeasurement): string {
  const ending = step.ending;
  if (ending === undefined || ending.kind === 'held') return `${fmt(step.holdSeconds, 0)} s`;
  const evidence = ending.evidence === undefined ? '' : ` (${ending.evidence})`;
  return `${fmt(ending.heldSeconds, 0)}/${fmt(ending.plannedHoldSeconds, 0)} s, ${ending.kind.replace('-', ' ')}${evidence}`;
}

function seconds(value: number | null): string {
  return value === null ? '-' : `${fmt(value, 2)} s`;
}
