import { fmt, niceScale, pct } from '../../shared/calibration/index.js';
import type { ReplayResult } from './replay.js';

/**
 * The what-if chart: one self-contained SVG (no fonts, scripts or styles from elsewhere), drawn by hand like the
 * calibration chart. Three panels share the time axis: the offered rate; the Pods holding a GPU per candidate; the
 * p95 per candidate against the SLO. Each point is a bucket of the replay (the most Pods, the worst p95 of the
 * bucket), so a short spike stays visible on a day-long axis. A p95 above the panel's top (3 × the SLO, or an
 * unserved second) is drawn at the top.
 */

const SIZE = { width: 960, left: 70, right: 190, top: 60, panel: 170, gap: 46, bottom: 50 } as const;
const PALETTE = ['#1f77b4', '#d95f02', '#2e8b57', '#7b3294', '#c0392b', '#8c6d31'] as const;
const GRID = '#e5e5e5';
const AXIS = '#333333';

/** Renders the results of one trace (every candidate replayed on it) as an SVG document. */
export function renderWhatIfSvg(results: readonly ReplayResult[], title: string): string {
  const first = results[0];
  const height = SIZE.top + 3 * SIZE.panel + 2 * SIZE.gap + SIZE.bottom;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE.width}" height="${height}" viewBox="0 0 ${SIZE.width} ${height}" font-family="sans-serif" font-size="12" fill="#222222">`,
    `<title>${esc(title)}</title>`,
    `<rect x="0" y="0" width="${SIZE.width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${(SIZE.width - SIZE.right + SIZE.left) / 2}" y="26" text-anchor="middle" font-size="16" font-weight="bold">${esc(title)}</text>`,
  ];
  if (first === undefined) return [...out, '</svg>'].join('\n');
  const x0 = SIZE.left;
  const x1 = SIZE.width - SIZE.right;
  const hours = first.seconds / 3600;
  const xs = niceScale(hours, 12);
  const px = (bucketIndex: number) =>
    x0 + ((x1 - x0) * ((bucketIndex + 0.5) * first.series.bucketSeconds)) / 3600 / xs.max;
  const slo = first.sloSeconds;

  const panels = [
    {
      label: 'offered rate (req/s)',
      max: Math.max(...first.series.offeredRps),
      lines: [{ name: 'offered', color: AXIS, values: first.series.offeredRps }],
    },
    {
      label: 'Pods (Ready + starting)',
      max: Math.max(...results.flatMap((r) => r.series.pods)),
      lines: results.map((r, i) => ({ name: r.candidate, color: color(i), values: r.series.pods })),
    },
    {
      label: `p95 latency (s), SLO ${fmt(slo)} s`,
      max: Math.min(3 * slo, Math.max(slo, ...results.flatMap((r) => r.series.p95S.filter(Number.isFinite)))),
      lines: results.map((r, i) => ({ name: r.candidate, color: color(i), values: r.series.p95S })),
      threshold: slo,
    },
  ];
  panels.forEach((panel, index) => {
    const top = SIZE.top + index * (SIZE.panel + SIZE.gap);
    const bottom = top + SIZE.panel;
    const ys = niceScale(panel.max * 1.08, 4);
    const py = (v: number) => bottom - ((bottom - top) * Math.min(v, ys.max)) / ys.max;
    out.push(`<text x="${x0}" y="${top - 8}" font-weight="bold">${esc(panel.label)}</text>`);
    for (const tick of ys.ticks) {
      out.push(line(x0, py(tick), x1, py(tick), GRID));
      out.push(text(x0 - 6, py(tick) + 4, fmt(tick), 'end'));
    }
    for (const tick of xs.ticks) {
      const at = x0 + ((x1 - x0) * tick) / xs.max;
      out.push(line(at, bottom, at, bottom + 4, AXIS));
      if (index === panels.length - 1) out.push(text(at, bottom + 18, `${fmt(tick)}`, 'middle'));
    }
    out.push(line(x0, bottom, x1, bottom, AXIS), line(x0, bottom, x0, top, AXIS));
    if (panel.threshold !== undefined) {
      out.push(line(x0, py(panel.threshold), x1, py(panel.threshold), '#c0392b', '6 4'));
      out.push(text(x1 + 6, py(panel.threshold) + 4, `SLO ${fmt(panel.threshold)} s`, 'start', '#c0392b'));
    }
    for (const series of panel.lines) {
      const points = series.values.map((v, i) => `${n(px(i))},${n(py(Number.isFinite(v) ? v : ys.max))}`);
      out.push(
        `<polyline fill="none" stroke="${series.color}" stroke-width="1.3" points="${points.join(' ')}"><title>${esc(series.name)}</title></polyline>`,
      );
    }
  });
  out.push(text((x0 + x1) / 2, height - 14, 'hours since the start of the trace', 'middle'));

  // Legend: one line per candidate with its headline figures.
  results.forEach((r, i) => {
    const y = SIZE.top + SIZE.panel + SIZE.gap + i * 44;
    out.push(line(x1 + 14, y, x1 + 34, y, color(i), undefined, 3));
    out.push(text(x1 + 40, y + 4, shortLabel(r.candidate), 'start', color(i)));
    out.push(text(x1 + 40, y + 19, `SLO ${pct(r.sloAttainment)}, ${fmt(r.gpuHours, 1)} GPU-h`, 'start'));
  });
  out.push('</svg>');
  return out.join('\n');
}

/** A file candidate by its file name (the legend is 150 px wide); the polyline's tooltip keeps the whole path. */
function shortLabel(label: string): string {
  return label.replace(/^(report:)?.*\//, '$1');
}

function color(index: number): string {
  return PALETTE[index % PALETTE.length] ?? AXIS;
}

function n(value: number): string {
  return value.toFixed(1);
}

function esc(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function line(xa: number, ya: number, xb: number, yb: number, stroke: string, dash?: string, width = 1): string {
  return `<line x1="${n(xa)}" y1="${n(ya)}" x2="${n(xb)}" y2="${n(yb)}" stroke="${stroke}" stroke-width="${width}"${dash === undefined ? '' : ` stroke-dasharray="${dash}"`}/>`;
}

function text(x: number, y: number, content: string, anchor: 'start' | 'middle' | 'end', fill?: string): string {
  return `<text x="${n(x)}" y="${n(y)}" text-anchor="${anchor}"${fill === undefined ? '' : ` fill="${fill}"`}>${esc(content)}</text>`;
}
