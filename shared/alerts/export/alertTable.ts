import { ALERT_RULES } from '../rules/index.js';

/** `for` as the guide's table writes it: `2 min`, `30 s`, `-` for none. */
function forText(seconds: number): string {
  if (seconds === 0) return '-';
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

/** Markdown table cells must not break the row: `|` escaped, line breaks as spaces. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

/** The alerts as a markdown table (alert | condition | for | severity | meaning), from the registry, for the README. */
export function renderAlertTable(): string {
  const rows = ALERT_RULES.map(
    (rule) =>
      `| ${rule.name} | ${cell(rule.condition)} | ${forText(rule.defaults.forSeconds)} | ${rule.severity} | ${cell(rule.meaning)} |`,
  );
  return ['| alert | condition | for | severity | meaning |', '|---|---|---|---|---|', ...rows].join('\n') + '\n';
}
