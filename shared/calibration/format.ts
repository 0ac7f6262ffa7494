/** Number formatting shared by the verdict reasons, the summary text and the chart, so they agree digit for digit. */

/** A number as a person writes it: at most `digits` decimals, no trailing zeros (`4.8`, `61`, `0.57`). */
export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return String(value);
  const rounded = Number(value.toFixed(digits));
  // `-0` prints as `0`.
  return String(rounded === 0 ? 0 : rounded);
}

/** A 0-1 fraction as a percentage (`0.953` → `95.3 %`). */
export function pct(fraction: number, digits = 1): string {
  return `${fmt(fraction * 100, digits)} %`;
}

/** Rounds to one decimal (the thresholds are written with 0.1 s resolution). */
export function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Rounds down to one decimal (stays at or below a cap such as the SLO). */
export function floor1(value: number): number {
  return Math.floor(value * 10 + 1e-9) / 10;
}
