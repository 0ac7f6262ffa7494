/**
 * The webhook URL is a credential: anyone holding it can post to the channel. These helpers keep it out of error
 * messages, causes and logs; only the scheme and host (`https://hooks.slack.com/services/***`) are ever shown.
 */

const REDACTED = '***';
const MAX_CAUSE_DEPTH = 5;

/** A form of the URL that is safe to log: scheme, host and `/services/***`. */
export function describeWebhookUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}/${parsed.pathname.split('/')[1] ?? ''}/${REDACTED}`;
  } catch {
    return `(unparseable URL of ${url.length} characters)`;
  }
}

/** `text` with every form of the URL (as given, normalised, its path, its secret path segments) replaced by `***`. */
export function redactWebhookUrl(text: string, url: string): string {
  if (url === '') return text;
  const secrets = new Set<string>([url]);
  try {
    const parsed = new URL(url);
    secrets.add(parsed.href);
    if (parsed.pathname.length > 1) secrets.add(parsed.pathname);
    if (parsed.search.length > 1) secrets.add(parsed.search);
    // The token is the last path segment, and the team and hook ids (T…/B…) identify the hook: redact them alone too,
    // but not the fixed `services` prefix nor fragments too short to be anything but noise.
    for (const segment of parsed.pathname.split('/')) {
      if (segment.length < 6 || segment === 'services') continue;
      secrets.add(segment);
      secrets.add(safeDecode(segment));
    }
  } catch {
    // Not a URL: only the text as given can leak.
  }
  let out = text;
  // Longest first, so the whole URL is replaced before its parts.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * A copy of `error` safe to attach as a `cause`: same name, message and stack with the URL redacted, the same for
 * its causes (a few levels deep), plus `code` when it has one (`ECONNREFUSED`, `UND_ERR_CONNECT_TIMEOUT`).
 */
export function redactedCause(error: unknown, url: string, depth = 0): Error {
  if (!(error instanceof Error)) return new Error(redactWebhookUrl(String(error), url));
  const nested =
    error.cause !== undefined && depth < MAX_CAUSE_DEPTH ? redactedCause(error.cause, url, depth + 1) : undefined;
  const copy = new Error(redactWebhookUrl(error.message, url), nested === undefined ? undefined : { cause: nested });
  copy.name = error.name;
  copy.stack = error.stack === undefined ? undefined : redactWebhookUrl(error.stack, url);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') Object.assign(copy, { code });
  return copy;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
