import { type AlertMessage, formatAlertValue, type NotifyReason } from '../alerts/index.js';

/**
 * The Slack message of one alert notification: a top-level `text` (what phones and screen readers show) and one
 * attachment coloured by severity and status, holding Block Kit blocks. Attachments are the only way to colour a
 * message bar; blocks inside them render like top-level blocks.
 */

/** Slack's limits (Block Kit reference: header, section, context, actions, button; message: 50 blocks). */
export const SLACK_LIMITS = {
  blocks: 50,
  headerText: 150,
  sectionText: 3_000,
  sectionFields: 10,
  fieldText: 2_000,
  contextElements: 10,
  contextText: 3_000,
  actionsElements: 25,
  buttonText: 75,
  buttonUrl: 3_000,
  /** Slack truncates longer messages; the fallback is a single line, so this is generous. */
  fallbackText: 3_000,
} as const;

/** The bar colours: Slack's brand red, yellow and green, which read as firing-critical, firing-warning, resolved. */
export const SLACK_COLORS = {
  criticalFiring: '#E01E5A',
  warningFiring: '#ECB22E',
  resolved: '#2EB67D',
} as const;

export interface SlackPlainText {
  type: 'plain_text';
  text: string;
  emoji?: boolean;
}

export interface SlackMrkdwn {
  type: 'mrkdwn';
  text: string;
}

export interface SlackButton {
  type: 'button';
  text: SlackPlainText;
  url: string;
  action_id: string;
}

export type SlackBlock =
  | { type: 'header'; text: SlackPlainText }
  | { type: 'section'; text: SlackMrkdwn }
  | { type: 'section'; fields: SlackMrkdwn[] }
  | { type: 'context'; elements: SlackMrkdwn[] }
  | { type: 'actions'; elements: SlackButton[] }
  | { type: 'divider' };

export interface SlackAttachment {
  color: string;
  /** Shown where blocks cannot be (old clients, notifications). */
  fallback: string;
  blocks: SlackBlock[];
}

/** What is POSTed to an incoming webhook. */
export interface SlackPayload {
  text: string;
  attachments: SlackAttachment[];
}

const STATUS_MARK = {
  critical: '🔴',
  warning: '🟠',
  resolved: '✅',
} as const;

/** The pipeline's reason, as the on-call engineer reads it. */
const REASON_TEXT: Record<NotifyReason, string> = {
  first: 'first notification',
  repeat: 'still firing (repeat notification)',
  resolved: 'resolved',
  retry: 'sent late: an earlier attempt to send it failed',
};

/** Builds the Slack message of one alert notification (message.ts v1), within Slack's limits. */
export function slackMessageFor(message: AlertMessage): SlackPayload {
  const resolved = message.status === 'resolved';
  const color = resolved
    ? SLACK_COLORS.resolved
    : message.severity === 'critical'
      ? SLACK_COLORS.criticalFiring
      : SLACK_COLORS.warningFiring;
  const title = `${resolved ? STATUS_MARK.resolved : STATUS_MARK[message.severity]} ${resolved ? 'RESOLVED' : 'FIRING'}: ${message.alertname}`;

  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(title, SLACK_LIMITS.headerText), emoji: true } },
  ];
  // Slack refuses an empty text object, and `**` would show as two stars.
  if (message.summary.trim() !== '') blocks.push(section(escapeMrkdwn(message.summary), '*', '*'));
  blocks.push({ type: 'section', fields: fieldsOf(message).slice(0, SLACK_LIMITS.sectionFields) });
  if (message.description.trim() !== '') blocks.push(section(escapeMrkdwn(message.description)));
  // Steps help while it fires; once resolved they are noise.
  if (!resolved && message.runbook.trim() !== '') blocks.push(section(escapeMrkdwn(message.runbook), '*Runbook*\n'));
  const buttons = buttonsOf(message);
  if (buttons.length > 0) blocks.push({ type: 'actions', elements: buttons });
  blocks.push({ type: 'context', elements: contextOf(message) });

  const fallback = truncate(
    escapeMrkdwn(`${title} (${message.severity}, target ${message.target}): ${message.summary}`),
    SLACK_LIMITS.fallbackText,
  );
  return { text: fallback, attachments: [{ color, fallback, blocks: blocks.slice(0, SLACK_LIMITS.blocks) }] };
}

/** A mrkdwn section; the body is cut so that the markup around it (`*bold*`) stays whole. */
function section(body: string, before = '', after = ''): SlackBlock {
  const text = `${before}${truncate(body, SLACK_LIMITS.sectionText - before.length - after.length)}${after}`;
  return { type: 'section', text: { type: 'mrkdwn', text } };
}

function field(label: string, value: string): SlackMrkdwn {
  const before = `*${label}*\n`;
  return { type: 'mrkdwn', text: `${before}${truncate(value, SLACK_LIMITS.fieldText - before.length)}` };
}

function fieldsOf(message: AlertMessage): SlackMrkdwn[] {
  const resolved = message.status === 'resolved';
  const value = `${formatAlertValue(message.value, message.unit)} (threshold ${formatAlertValue(message.threshold, message.unit)})`;
  const fields = [
    field('Target', escapeMrkdwn(message.target)),
    field('Severity', escapeMrkdwn(message.severity)),
    field(resolved ? 'Last value' : 'Value', escapeMrkdwn(value)),
    field('Started', slackDate(message.startsAt)),
  ];
  if (resolved && message.endsAt !== null) {
    fields.push(field('Ended', slackDate(message.endsAt)));
    const lasted = Date.parse(message.endsAt) - Date.parse(message.startsAt);
    if (Number.isFinite(lasted) && lasted >= 0) fields.push(field('Duration', formatDuration(lasted)));
  }
  return fields;
}

function buttonsOf(message: AlertMessage): SlackButton[] {
  const links: Array<[string, string, string | null]> = [
    ['Runbook', 'open_runbook', message.runbookUrl],
    ['Dashboard', 'open_dashboard', message.dashboardUrl],
  ];
  const buttons: SlackButton[] = [];
  for (const [label, actionId, url] of links) {
    // Slack rejects the whole message (invalid_blocks) for a button URL it cannot use: leave such a link out.
    if (url === null || !isHttpUrl(url) || url.length > SLACK_LIMITS.buttonUrl) continue;
    buttons.push({ type: 'button', text: { type: 'plain_text', text: label }, url, action_id: actionId });
  }
  return buttons.slice(0, SLACK_LIMITS.actionsElements);
}

function contextOf(message: AlertMessage): SlackMrkdwn[] {
  const labels = Object.entries(message.labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${value}`)
    .join('  ·  ');
  const elements: SlackMrkdwn[] = [];
  if (labels !== '') elements.push({ type: 'mrkdwn', text: truncate(escapeMrkdwn(labels), SLACK_LIMITS.contextText) });
  elements.push({
    type: 'mrkdwn',
    text: truncate(
      escapeMrkdwn(`${REASON_TEXT[message.reason]}  ·  fingerprint ${message.fingerprint}`),
      SLACK_LIMITS.contextText,
    ),
  });
  return elements.slice(0, SLACK_LIMITS.contextElements);
}

/** `95_000` → `1m 35s`; `7_380_000` → `2h 3m`; the two largest units are enough for a person. */
export function formatDuration(ms: number): string {
  const totalSeconds = Math.round(ms / 1000);
  const parts: Array<[number, string]> = [
    [Math.floor(totalSeconds / 86_400), 'd'],
    [Math.floor((totalSeconds % 86_400) / 3_600), 'h'],
    [Math.floor((totalSeconds % 3_600) / 60), 'm'],
    [totalSeconds % 60, 's'],
  ];
  const first = parts.findIndex(([count]) => count > 0);
  if (first === -1) return '0s';
  return parts
    .slice(first, first + 2)
    .filter(([count]) => count > 0)
    .map(([count, unit]) => `${count}${unit}`)
    .join(' ');
}

/**
 * Slack's date token: shown in each reader's own time zone, with the ISO text as the fallback
 * (Slack "Formatting text for app surfaces": `<!date^epoch^{date_short_pretty} {time}|fallback>`).
 */
function slackDate(iso: string): string {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return escapeMrkdwn(iso);
  const text = new Date(ms).toISOString().replace('.000Z', 'Z');
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time_secs}|${text}>`;
}

/** Escapes the three characters Slack's mrkdwn gives meaning to (Slack "Escaping text": &, <, >). */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Cuts `text` to at most `max` UTF-16 units, ending with "…". Never splits a surrogate pair or an escape
 * (`&amp;`), so the cut text still renders.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(0, max - 1));
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  cut = cut.replace(/&[a-z]{0,3}$/, '');
  return `${cut}…`;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
