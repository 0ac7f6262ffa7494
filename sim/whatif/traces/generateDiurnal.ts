/**
 * Writes `diurnal-24h.csv`, the sample trace `vllm-pilot whatif` ships with: one row per minute of a day, sized for
 * the demo profile at the guide's request shape (one replica completes about 12 req/s).
 * A night trough of 2 req/s, a morning ramp to 22 req/s by 09:00, a lunch peak near 46 req/s at 12:30 (nearly four
 * replicas), an afternoon plateau, an evening decline, and three bursts (10:15 +20 req/s for 10 min, 15:40 +30 for
 * 5 min, 20:30 +15 for 8 min). A ±5 % ripple from fixed sines (no randomness: the file is reproducible).
 *
 *   node --import tsx sim/whatif/traces/generateDiurnal.ts > sim/whatif/traces/diurnal-24h.csv
 */

function smoothstep(from: number, to: number, x: number): number {
  const t = Math.min(1, Math.max(0, (x - from) / (to - from)));
  return t * t * (3 - 2 * t);
}

const BURSTS = [
  { startMin: 10 * 60 + 15, minutes: 10, rps: 20 },
  { startMin: 15 * 60 + 40, minutes: 5, rps: 30 },
  { startMin: 20 * 60 + 30, minutes: 8, rps: 15 },
] as const;

function rateAt(minute: number): number {
  const h = minute / 60;
  const day = 2 + 20 * smoothstep(6, 9, h) - 20 * smoothstep(17, 23, h);
  const lunch = 24 * Math.exp(-((h - 12.5) ** 2) / (2 * 0.8 ** 2));
  const burst = BURSTS.reduce(
    (sum, b) => (minute >= b.startMin && minute < b.startMin + b.minutes ? sum + b.rps : sum),
    0,
  );
  const ripple = 1 + 0.03 * Math.sin(minute / 7) + 0.02 * Math.sin(minute / 3.1);
  return (day + lunch + burst) * ripple;
}

const rows = ['seconds,rps'];
for (let minute = 0; minute < 24 * 60; minute++) rows.push(`${minute * 60},${rateAt(minute).toFixed(2)}`);
process.stdout.write(`${rows.join('\n')}\n`);
