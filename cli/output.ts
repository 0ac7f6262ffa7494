/** Terminal output helpers for the CLI: a one-line progress bar and aligned tables. No dependencies. */

/** Renders `[#####.....]  50% label` for a fraction 0-1. */
export function progressBar(fraction: number, label: string, width = 30): string {
  const f = Math.min(Math.max(fraction, 0), 1);
  const filled = Math.round(f * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.round(f * 100)).padStart(3)}% ${label}`;
}

/** Writes a progress line in place on a TTY, or once per call elsewhere (so CI logs stay readable). */
export function writeProgress(stream: NodeJS.WriteStream, line: string, done = false): void {
  if (stream.isTTY) stream.write(`\r\x1b[2K${line}${done ? '\n' : ''}`);
  else if (done) stream.write(`${line}\n`);
}

/** Formats rows as an aligned text table with a header row; numbers are right-aligned. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  const cells = [header.map(String), ...rows.map((r) => r.map((c) => (typeof c === 'number' ? formatNumber(c) : c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  return cells
    .map((r) =>
      r
        .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A number with sensible precision for a terminal: 3 significant digits below 100, integers above. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100) return Math.round(n).toString();
  return Number(n.toPrecision(3)).toString();
}
