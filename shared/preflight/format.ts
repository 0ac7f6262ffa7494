import type { CheckResult, PreflightReport } from './types.js';

const STATUS_TEXT = { pass: 'PASS', warn: 'WARN', fail: 'FAIL' } as const;

/**
 * A human table of a report: a header, one line per check (item, status, title, reason), then the fixes of the
 * checks that did not pass, then the totals.
 */
export function formatPreflightReport(report: PreflightReport): string {
  const { target } = report;
  const lines = [
    `Preflight of ${target.name} (${target.cluster} ${target.namespace}/${target.deployment}, model ${target.model}) at ${report.checkedAt}`,
    '',
  ];
  const titleWidth = Math.max(5, ...report.results.map((r) => r.title.length));
  lines.push(`${' #'.padEnd(3)}  ${'STATUS'}  ${'CHECK'.padEnd(titleWidth)}  REASON`);
  for (const result of report.results) lines.push(row(result, titleWidth));
  const fixes = report.results.filter((r) => r.status !== 'pass' && r.fix !== undefined);
  if (fixes.length > 0) {
    lines.push('', 'Fixes:');
    for (const result of fixes) lines.push(`${String(result.item).padStart(2)}. ${result.title}: ${result.fix ?? ''}`);
  }
  const { pass, warn, fail } = report.counts;
  lines.push('', `${STATUS_TEXT[report.status]}: ${pass} passed, ${warn} warned, ${fail} failed`);
  return lines.join('\n');
}

function row(result: CheckResult, titleWidth: number): string {
  return `${String(result.item).padStart(2)}   ${STATUS_TEXT[result.status].padEnd(6)}  ${result.title.padEnd(titleWidth)}  ${result.reason}`;
}
