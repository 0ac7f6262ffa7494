/**
 * The calibration chart: a self-contained SVG (no external fonts, scripts or styles) of queue depth and p95 latency
 * against the offered rate, with the saturation point, the last stable rate and the thresholds marked. It is stored
 * beside the report and opens in any browser. The curves join only the steps the analysis used; a step whose evidence
 * failed (repeated at the same rate, never judged) is a grey cross off the curves, its reasons in its tooltip.
 */
import { evidenceHeld } from './evidence.js';
import { fmt } from './format.js';
import type { CalibrationReport, StepMeasurement } from './types.js';

const SIZE = { width: 860, height: 500, left: 72, right: 78, top: 84, bottom: 58 } as const;
const COLORS = {
  queue: '#1f77b4',
  p95: '#d95f02',
  knee: '#c0392b',
  stable: '#2e8b57',
  repeated: '#8c8c8c',
  grid: '#e5e5e5',
  axis: '#333333',
  text: '#222222',
} as const;

const HEADROOM = 1.08;
/** A label beside a vertical marker goes to its left unless the marker is this close to the left axis. */
const LABEL_ROOM_PX = 170;

interface Scale {
  max: number;
  ticks: number[];
}

/** Renders the report's chart as an SVG document. */
export function renderChartSvg(report: CalibrationReport): string {
  const all = [...report.steps].sort((a, b) => a.rateRps - b.rateRps);
  // The analysis judged only these; a repeated step's figures are drawn apart and never joined to the curves.
  const steps = all.filter(evidenceHeld);
  const repeated = all.filter((s) => !evidenceHeld(s));
  const { analysis } = report;
  const thresholds = analysis.thresholds;
  const pods = Math.max(1, ...steps.map((s) => s.amp.pods));
  const queueLine = thresholds === null ? undefined : thresholds.queueDepthPerPod.value * pods;
  const guardrail = thresholds?.p95LatencySeconds.value;
  const scaleIn = thresholds?.scaleIn.value.p95BelowSeconds;

  // About 10 % of headroom on every axis, so the highest point and the knee are not drawn on the frame.
  // The axes hold the repeated steps' crosses too (queue mean and p95 are what a cross marks).
  const x = niceScale(HEADROOM * Math.max(0, ...all.map((s) => s.rateRps)), 8);
  const yq = niceScale(
    HEADROOM *
      Math.max(0, queueLine ?? 0, ...steps.map((s) => s.amp.queueMax), ...repeated.map((s) => s.amp.queueMean)),
  );
  const yl = niceScale(HEADROOM * Math.max(0, guardrail ?? 0, scaleIn ?? 0, ...all.map((s) => p95Of(s) ?? 0)));

  const plot = {
    x0: SIZE.left,
    x1: SIZE.width - SIZE.right,
    y0: SIZE.height - SIZE.bottom,
    y1: SIZE.top,
  };
  const px = (rate: number) => plot.x0 + ((plot.x1 - plot.x0) * rate) / x.max;
  const pyq = (queue: number) => plot.y0 - ((plot.y0 - plot.y1) * queue) / yq.max;
  const pyl = (seconds: number) => plot.y0 - ((plot.y0 - plot.y1) * seconds) / yl.max;

  const out: string[] = [];
  const p = report.provenance;
  const title = `Calibration of ${p.model} — ${p.finishedAt.slice(0, 10)}`;
  const subtitle = `${p.namespace}/${p.deployment}${p.gpu === null ? '' : ` on ${p.gpu}`} · ${p.image}`;
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE.width}" height="${SIZE.height}" ` +
      `viewBox="0 0 ${SIZE.width} ${SIZE.height}" font-family="sans-serif" font-size="12" fill="${COLORS.text}">`,
  );
  out.push(`<title>${esc(title)}</title>`);
  out.push(`<rect x="0" y="0" width="${SIZE.width}" height="${SIZE.height}" fill="#ffffff"/>`);
  out.push(
    `<text x="${SIZE.width / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${esc(title)}</text>`,
  );
  out.push(`<text x="${SIZE.width / 2}" y="42" text-anchor="middle" font-size="11">${esc(subtitle)}</text>`);

  // Grid and axes.
  for (const tick of yq.ticks) {
    out.push(line(plot.x0, pyq(tick), plot.x1, pyq(tick), COLORS.grid));
    out.push(text(plot.x0 - 6, pyq(tick) + 4, fmt(tick), 'end', COLORS.queue));
  }
  for (const tick of yl.ticks) out.push(text(plot.x1 + 6, pyl(tick) + 4, fmt(tick), 'start', COLORS.p95));
  for (const tick of x.ticks) {
    out.push(line(px(tick), plot.y0, px(tick), plot.y0 + 5, COLORS.axis));
    out.push(text(px(tick), plot.y0 + 18, fmt(tick), 'middle'));
  }
  out.push(line(plot.x0, plot.y0, plot.x1, plot.y0, COLORS.axis));
  out.push(line(plot.x0, plot.y0, plot.x0, plot.y1, COLORS.queue));
  out.push(line(plot.x1, plot.y0, plot.x1, plot.y1, COLORS.p95));
  out.push(text((plot.x0 + plot.x1) / 2, SIZE.height - 16, 'offered rate (req/s)', 'middle'));
  out.push(verticalText(20, (plot.y0 + plot.y1) / 2, 'queue depth (requests waiting)', COLORS.queue));
  out.push(verticalText(SIZE.width - 18, (plot.y0 + plot.y1) / 2, 'p95 end-to-end latency (s)', COLORS.p95));

  // Thresholds (horizontal) and rates (vertical).
  if (queueLine !== undefined) {
    const label = `queue threshold ${thresholds?.queueDepthPerPod.value ?? ''} per Pod${pods > 1 ? ` × ${pods}` : ''}`;
    out.push(line(plot.x0, pyq(queueLine), plot.x1, pyq(queueLine), COLORS.queue, '6 4', 'queue-threshold'));
    out.push(text(plot.x0 + 6, pyq(queueLine) - 5, label, 'start', COLORS.queue));
  }
  if (guardrail !== undefined) {
    out.push(line(plot.x0, pyl(guardrail), plot.x1, pyl(guardrail), COLORS.p95, '6 4', 'p95-guardrail'));
    out.push(text(plot.x0 + 6, pyl(guardrail) - 5, `p95 guardrail ${fmt(guardrail, 1)} s`, 'start', COLORS.p95));
  }
  if (scaleIn !== undefined) {
    out.push(line(plot.x0, pyl(scaleIn), plot.x1, pyl(scaleIn), COLORS.p95, '2 4', 'scale-in'));
    out.push(text(plot.x0 + 6, pyl(scaleIn) - 5, `scale in below ${fmt(scaleIn, 1)} s`, 'start', COLORS.p95));
  }
  const marker = (rate: number, label: string, y: number, color: string, id: string, dash?: string, width = 1) => {
    const at = px(rate);
    out.push(line(at, plot.y0, at, plot.y1 - 8, color, dash, id, width));
    const left = at - plot.x0 > LABEL_ROOM_PX;
    out.push(text(left ? at - 4 : at + 4, y, label, left ? 'end' : 'start', color));
  };
  if (analysis.lastStableRps !== null) {
    marker(
      analysis.lastStableRps,
      `last stable ${fmt(analysis.lastStableRps)} req/s`,
      plot.y1 + 28,
      COLORS.stable,
      'last-stable',
      '2 3',
    );
  }
  if (analysis.saturation.found) {
    const rate = analysis.saturation.rateRps;
    marker(rate, `saturation ${fmt(rate)} req/s`, plot.y1 + 12, COLORS.knee, 'knee', undefined, 2);
  } else {
    out.push(text(plot.x1 - 6, plot.y1 + 12, 'no saturation within the plan', 'end', COLORS.knee));
  }

  // The curves, with a point per step.
  const queueMean = steps.map((s) => [px(s.rateRps), pyq(s.amp.queueMean)] as const);
  const queueMax = steps.map((s) => [px(s.rateRps), pyq(s.amp.queueMax)] as const);
  const p95 = steps.flatMap((s) => {
    const v = p95Of(s);
    return v === null ? [] : [[px(s.rateRps), pyl(v)] as const];
  });
  out.push(polyline('queue-max', queueMax, COLORS.queue, '5 3', 1.5));
  out.push(polyline('queue-mean', queueMean, COLORS.queue, undefined, 2.5));
  out.push(polyline('p95', p95, COLORS.p95, undefined, 2.5));
  for (const [cx, cy] of queueMean) out.push(circle(cx, cy, COLORS.queue));
  for (const [cx, cy] of queueMax) out.push(circle(cx, cy, COLORS.queue, true));
  for (const [cx, cy] of p95) out.push(circle(cx, cy, COLORS.p95));

  // Steps whose evidence failed: a grey cross at their queue mean and p95, the reasons in a tooltip.
  if (repeated.length > 0) {
    out.push('<g id="repeated-steps">');
    for (const s of [...repeated].sort((a, b) => a.index - b.index)) {
      const why =
        `step ${s.index + 1} at ${fmt(s.rateRps)} req/s was repeated and is not used: ` +
        (s.evidence?.reasons ?? []).join('; ');
      const p95Value = p95Of(s);
      out.push(`<g><title>${esc(why)}</title>`);
      out.push(cross(px(s.rateRps), pyq(s.amp.queueMean), COLORS.repeated));
      if (p95Value !== null) out.push(cross(px(s.rateRps), pyl(p95Value), COLORS.repeated));
      out.push('</g>');
    }
    out.push('</g>');
  }

  // Legend.
  const legend: Array<[string, string, string | undefined]> = [
    ['queue depth, mean', COLORS.queue, undefined],
    ['queue depth, max', COLORS.queue, '5 3'],
    ['p95 end-to-end latency', COLORS.p95, undefined],
  ];
  legend.forEach(([label, color, dash], i) => {
    const lx = SIZE.left + i * 200;
    out.push(line(lx, 60, lx + 26, 60, color, dash, undefined, 2.5));
    out.push(text(lx + 32, 64, label, 'start'));
  });
  if (repeated.length > 0) {
    const lx = SIZE.left + legend.length * 200;
    out.push(cross(lx + 13, 60, COLORS.repeated));
    out.push(text(lx + 32, 64, 'repeated, not used', 'start'));
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** p95 end-to-end latency of a step: AMP's, else k6's client-side figure. */
function p95Of(step: StepMeasurement): number | null {
  if (step.amp.p95E2eSeconds !== null) return step.amp.p95E2eSeconds;
  return step.k6 !== null && step.k6.httpReqs > 0 ? step.k6.httpReqDurationMs.p95 / 1000 : null;
}

/** An axis from 0 to a round number at or above `max`, with ticks at 1, 2 or 5 × 10^k (about 5 of them). */
export function niceScale(max: number, count = 5): Scale {
  const top = max > 0 && Number.isFinite(max) ? max : 1;
  const raw = top / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? 10 * magnitude;
  const end = Math.ceil(top / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let i = 0; i * step <= end + step / 1e6; i++) ticks.push(Number((i * step).toFixed(10)));
  return { max: end, ticks };
}

function esc(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const n = (value: number) => value.toFixed(1);

function line(
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  stroke: string,
  dash?: string,
  id?: string,
  width = 1,
): string {
  const attrs = [
    id === undefined ? '' : ` id="${id}"`,
    ` x1="${n(x1)}" y1="${n(y1)}" x2="${n(x2)}" y2="${n(y2)}" stroke="${stroke}" stroke-width="${width}"`,
    dash === undefined ? '' : ` stroke-dasharray="${dash}"`,
  ];
  return `<line${attrs.join('')}/>`;
}

function text(x: number, y: number, content: string, anchor: 'start' | 'middle' | 'end', fill?: string): string {
  const color = fill === undefined ? '' : ` fill="${fill}"`;
  return `<text x="${n(x)}" y="${n(y)}" text-anchor="${anchor}"${color}>${esc(content)}</text>`;
}

function verticalText(x: number, y: number, content: string, fill: string): string {
  return (
    `<text x="${n(x)}" y="${n(y)}" text-anchor="middle" fill="${fill}" ` +
    `transform="rotate(-90 ${n(x)} ${n(y)})">${esc(content)}</text>`
  );
}

function polyline(
  id: string,
  points: ReadonlyArray<readonly [number, number]>,
  stroke: string,
  dash: string | undefined,
  width: number,
): string {
  const dashAttr = dash === undefined ? '' : ` stroke-dasharray="${dash}"`;
  const coords = points.map(([px, py]) => `${n(px)},${n(py)}`).join(' ');
  return `<polyline id="${id}" points="${coords}" fill="none" stroke="${stroke}" stroke-width="${width}"${dashAttr}/>`;
}

/** A step that is not on the curves: two crossed strokes, so it reads apart from their filled and hollow points. */
function cross(cx: number, cy: number, color: string): string {
  const r = 4;
  return `<path class="repeated" d="M${n(cx - r)},${n(cy - r)}L${n(cx + r)},${n(cy + r)}M${n(cx - r)},${n(cy + r)}L${n(cx + r)},${n(cy - r)}" stroke="${color}" stroke-width="2" fill="none"/>`;
}

function circle(cx: number, cy: number, color: string, hollow = false): string {
  const fill = hollow ? '#ffffff' : color;
  return `<circle cx="${n(cx)}" cy="${n(cy)}" r="3.5" fill="${fill}" stroke="${color}" stroke-width="1.5"/>`;
}
