/**
 * Errors of the Slack module. Every class extends `SlackError`, sets `name` (Lambda's error metric, the DLQ record
 * and the logs show it) and says whether trying again later may help (`retryable`).
 *
 * The webhook URL is a secret (whoever holds it can post to the channel): no message, property or cause of these
 * errors contains it. Callers pass causes through `redactedCause` before wrapping them.
 */

/** Base class of every error raised by `shared/slack`. */
export class SlackError extends Error {
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SlackError';
    this.retryable = retryable;
  }
}

/**
 * Slack refused the message for good (a 4xx other than 429): `status` and Slack's error code from the body
 * (`invalid_payload`, `no_service`, `channel_not_found`, `channel_is_archived`, `action_prohibited`, ...).
 */
export class SlackWebhookRejectedError extends SlackError {
  readonly status: number;
  /** Slack's error code, when the body was one (`invalid_payload`); undefined for anything else. */
  readonly slackError: string | undefined;

  constructor(status: number, slackError: string | undefined, options?: { cause?: unknown }) {
    super(
      `Slack rejected the message with HTTP ${status}${slackError === undefined ? '' : ` ${slackError}`}` +
        `: ${hintFor(status, slackError)}`,
      false,
      options,
    );
    this.name = 'SlackWebhookRejectedError';
    this.status = status;
    this.slackError = slackError;
  }
}

/** Slack kept answering 429/5xx, timing out or failing to connect until the attempts ran out (or the deadline came). */
export class SlackWebhookUnavailableError extends SlackError {
  readonly attempts: number;
  /** The last HTTP status, when the last attempt got an answer. */
  readonly lastStatus: number | undefined;
  /** `attempts-exhausted` or `aborted` (the caller's deadline or signal). */
  readonly reason: 'attempts-exhausted' | 'aborted';

  constructor(
    details: {
      attempts: number;
      lastStatus: number | undefined;
      lastProblem: string;
      reason: 'attempts-exhausted' | 'aborted';
    },
    options?: { cause?: unknown },
  ) {
    super(
      `Slack webhook unavailable after ${details.attempts} attempt${details.attempts === 1 ? '' : 's'}` +
        `${details.reason === 'aborted' ? ' (stopped: deadline or abort)' : ''}; last problem: ${details.lastProblem}`,
      true,
      options,
    );
    this.name = 'SlackWebhookUnavailableError';
    this.attempts = details.attempts;
    this.lastStatus = details.lastStatus;
    this.reason = details.reason;
  }
}

/**
 * The webhook URL is unusable (not a URL, not https://hooks.slack.com/..., a secret of the wrong shape). The message
 * says what is wrong and where the URL came from (`secret <id>`), never the value.
 */
export class SlackWebhookUrlInvalidError extends SlackError {
  /** Where the URL came from: `secret <id>` or `the webhook URL source`. */
  readonly source: string;

  constructor(source: string, problem: string, options?: { cause?: unknown }) {
    super(
      `${source} holds no usable Slack webhook URL: ${problem}; accepted: "https://hooks.slack.com/services/..." ` +
        '(a secret may also hold JSON {"webhookUrl": "https://hooks.slack.com/services/..."})',
      false,
      options,
    );
    this.name = 'SlackWebhookUrlInvalidError';
    this.source = source;
  }
}

/** Secrets Manager did not return the secret (missing, access denied, throttled, unreachable). */
export class SlackWebhookSecretReadError extends SlackError {
  readonly secretId: string;

  constructor(secretId: string, retryable: boolean, options?: { cause?: unknown }) {
    const cause = options?.cause;
    const detail = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`could not read the Slack webhook secret ${secretId}: ${detail}`, retryable, options);
    this.name = 'SlackWebhookSecretReadError';
    this.secretId = secretId;
  }
}

/** What a person can do about Slack's answer (Slack's incoming-webhook error table, changelog 2016-05-17). */
function hintFor(status: number, slackError: string | undefined): string {
  switch (slackError) {
    case 'invalid_payload':
    case 'invalid_blocks':
    case 'invalid_blocks_format':
    case 'missing_text_or_fallback_or_attachments':
    case 'no_text':
    case 'too_many_attachments':
      return 'the message is malformed (a bug in the Block Kit builder)';
    case 'no_service':
    case 'no_team':
    case 'team_disabled':
    case 'invalid_token':
      return 'the webhook was removed or disabled; create a new one and update the secret';
    case 'channel_not_found':
    case 'channel_is_archived':
      return "the webhook's channel is gone or archived; point a new webhook at a live channel and update the secret";
    case 'action_prohibited':
    case 'posting_to_general_channel_denied':
      return 'the workspace forbids this webhook from posting there';
    default:
      return status === 404 || status === 410
        ? 'the webhook is gone; update the secret'
        : 'Slack does not accept this request; retrying will not help';
  }
}
