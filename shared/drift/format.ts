import type { DriftCheck } from './checkDrift.js';

/** The drift check as a person reads it: the calibration compared with, each finding, what was not judged, the figures. */
export function formatDriftCheck(check: DriftCheck): string {
  const lines: string[] = [];
  const c = check.calibration;
  lines.push(
    c === null
      ? `Target ${check.target}: no calibration to compare with`
      : `Target ${check.target}: compared with calibration ${c.execution} of ${c.finishedAt}` +
          (c.capacityPerPodRps === null ? '' : ` (capacity ${c.capacityPerPodRps.toFixed(1)} req/s per Pod)`),
  );
  lines.push(check.findings.length === 0 ? 'No drift found.' : `DRIFT (${check.findings.length}):`);
  for (const finding of check.findings) lines.push(`  - ${finding.kind}: ${finding.evidence}`);
  for (const note of check.notJudged) lines.push(`  (not judged: ${note})`);
  const l = check.live;
  lines.push(
    `Live, the last ${l.windowSeconds} s: ${l.pods} Pod(s) completing ${l.completedPerPodRps.toFixed(2)} req/s each, ` +
      `queue mean ${l.queueMean.toFixed(1)} (slope ${l.queueSlopePerSecond.toFixed(2)} req/s), p95 ` +
      (l.p95E2eSeconds === null ? 'none' : `${l.p95E2eSeconds.toFixed(2)} s`),
  );
  return `${lines.join('\n')}\n`;
}
