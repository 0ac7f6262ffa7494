import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../shared/clock/index.js';

/**
 * The twin's Slack: one incoming webhook on 127.0.0.1, answering as Slack does (plain-text bodies; Slack changelog
 * 2016-05-17 "Improving error conditions for Incoming Webhooks" and the webhook guide): 200 `ok`; 400
 * `invalid_payload` for a body that is not a JSON object; 400 `missing_text_or_fallback_or_attachments` for a message
 * with nothing to show; 400 `invalid_blocks` for blocks that break Block Kit's limits; 404 `no_service` for any other
 * path; 429 with Retry-After when rate limited.
 */

export interface SlackDelivery {
  receivedAtMs: number;
  /** The parsed JSON body. */
  body: unknown;
}

export interface SlackWebhookSinkOptions {
  /** One line per request. */
  log?: (line: string) => void;
  clock?: Clock;
}

export interface SlackWebhookSink {
  /** `http://127.0.0.1:PORT/services/T0000/B0000/<random>`: the webhook URL to store in the secret. */
  url: string;
  /** Accepted messages in arrival order. */
  deliveries(): SlackDelivery[];
  /** The next `n` POSTs to the webhook fail with `status`: 429 (`rate_limited`, Retry-After: 1) or 5xx (`rollup_error`). */
  failNextRequests(n: number, status: number): void;
  /** Forgets the deliveries and any failures still queued. */
  clear(): void;
  stop(): Promise<void>;
}

/** Block Kit's limits the sink enforces, as Slack does by refusing the message (Block Kit reference). */
const LIMITS = {
  blocks: 50,
  headerText: 150,
  sectionText: 3_000,
  sectionFields: 10,
  fieldText: 2_000,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  buttonUrl: 3_000,
  attachments: 100,
  bodyBytes: 1_000_000,
} as const;

const SLACK_HEADERS = { 'content-type': 'text/html' } as const;

/** Starts the webhook sink on a free loopback port; `stop()` closes it and its keep-alive connections. */
export async function startSlackWebhookSink(options: SlackWebhookSinkOptions = {}): Promise<SlackWebhookSink> {
  const clock = options.clock ?? systemClock;
  const log = options.log;
  const path = `/services/T0000/B0000/${randomBytes(12).toString('hex')}`;
  let deliveries: SlackDelivery[] = [];
  let failuresLeft = 0;
  let failureStatus = 500;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= LIMITS.bodyBytes) chunks.push(chunk);
    });
    req.on('end', () =>
      respond(req, res, bytes > LIMITS.bodyBytes ? undefined : Buffer.concat(chunks).toString('utf8')),
    );
  });

  function respond(req: IncomingMessage, res: ServerResponse, body: string | undefined): void {
    const pathname = new URL(req.url ?? '/', 'http://sink').pathname;
    // Slack answers `no_service` for any URL that is not a live webhook, whatever the method.
    if (pathname !== path) return answer(res, 404, 'no_service', `${req.method ?? ''} ${pathname}`);
    if (req.method !== 'POST') return answer(res, 405, 'invalid_method', `${req.method ?? ''} webhook`);
    if (failuresLeft > 0) {
      failuresLeft -= 1;
      if (failureStatus === 429) return answer(res, 429, 'rate_limited', 'injected', { 'retry-after': '1' });
      return answer(res, failureStatus, 'rollup_error', 'injected');
    }
    const parsed = body === undefined ? undefined : parseBody(req, body);
    if (parsed === undefined || typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return answer(res, 400, 'invalid_payload', 'not a JSON object');
    const problem = messageProblem(parsed as Record<string, unknown>);
    if (problem !== undefined) return answer(res, 400, problem.code, problem.detail);
    deliveries.push({ receivedAtMs: clock.now(), body: parsed });
    answer(res, 200, 'ok', `delivery ${deliveries.length}`);
  }

  function answer(
    res: ServerResponse,
    status: number,
    text: string,
    detail: string,
    headers: Record<string, string> = {},
  ): void {
    log?.(`slack sink: ${status} ${text} (${detail})`);
    res.writeHead(status, { ...SLACK_HEADERS, ...headers, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}${path}`,
    deliveries: () => deliveries.map((delivery) => ({ ...delivery })),
    failNextRequests: (n, status) => {
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`failNextRequests: n must be an integer >= 0, got ${n}`);
      if (status !== 429 && !(Number.isInteger(status) && status >= 500 && status <= 599))
        throw new RangeError(`failNextRequests: status must be 429 or 500-599, got ${status}`);
      failuresLeft = n;
      failureStatus = status;
    },
    clear: () => {
      deliveries = [];
      failuresLeft = 0;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // fetch keeps connections alive; they would hold close() open.
        server.closeAllConnections();
      }),
  };
}

/** JSON, or a form body `payload=<json>` (Slack accepts both); undefined when neither parses. */
function parseBody(req: IncomingMessage, body: string): unknown {
  const type = req.headers['content-type'] ?? '';
  const json = type.startsWith('application/x-www-form-urlencoded')
    ? (new URLSearchParams(body).get('payload') ?? '')
    : body;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

/** What Slack would refuse in a parsed message: Slack's error code and a detail for the log. */
function messageProblem(message: Record<string, unknown>): { code: string; detail: string } | undefined {
  const text = typeof message.text === 'string' && message.text.trim() !== '';
  const blocks = message.blocks;
  const attachments = message.attachments;
  const nonEmpty = (list: unknown) => Array.isArray(list) && list.length > 0;
  if (!text && !nonEmpty(blocks) && !nonEmpty(attachments))
    return { code: 'missing_text_or_fallback_or_attachments', detail: 'no text, blocks or attachments' };
  if (blocks !== undefined) {
    const problem = blocksProblem(blocks, 'blocks');
    if (problem !== undefined) return { code: 'invalid_blocks', detail: problem };
  }
  if (attachments !== undefined) {
    if (!Array.isArray(attachments) || attachments.length > LIMITS.attachments)
      return { code: 'invalid_attachments', detail: `attachments must be an array of at most ${LIMITS.attachments}` };
    for (const [index, attachment] of attachments.entries()) {
      if (typeof attachment !== 'object' || attachment === null)
        return { code: 'invalid_attachments', detail: `attachments[${index}] is not an object` };
      const inner = (attachment as { blocks?: unknown }).blocks;
      if (inner === undefined) continue;
      const problem = blocksProblem(inner, `attachments[${index}].blocks`);
      if (problem !== undefined) return { code: 'invalid_blocks', detail: problem };
    }
  }
  return undefined;
}

/** The first Block Kit rule a block list breaks, or undefined. */
function blocksProblem(blocks: unknown, where: string): string | undefined {
  if (!Array.isArray(blocks)) return `${where} is not an array`;
  if (blocks.length > LIMITS.blocks) return `${where} has ${blocks.length} blocks (at most ${LIMITS.blocks})`;
  for (const [index, block] of blocks.entries()) {
    const at = `${where}[${index}]`;
    if (typeof block !== 'object' || block === null) return `${at} is not an object`;
    const b = block as Record<string, unknown>;
    switch (b.type) {
      case 'header': {
        const problem = textProblem(b.text, `${at}.text`, LIMITS.headerText, 'plain_text');
        if (problem !== undefined) return problem;
        break;
      }
      case 'section': {
        if (b.text === undefined && b.fields === undefined) return `${at} has neither text nor fields`;
        if (b.text !== undefined) {
          const problem = textProblem(b.text, `${at}.text`, LIMITS.sectionText);
          if (problem !== undefined) return problem;
        }
        if (b.fields !== undefined) {
          if (!Array.isArray(b.fields) || b.fields.length > LIMITS.sectionFields)
            return `${at}.fields must be an array of at most ${LIMITS.sectionFields}`;
          for (const [i, f] of b.fields.entries()) {
            const problem = textProblem(f, `${at}.fields[${i}]`, LIMITS.fieldText);
            if (problem !== undefined) return problem;
          }
        }
        break;
      }
      case 'context': {
        if (!Array.isArray(b.elements) || b.elements.length === 0 || b.elements.length > LIMITS.contextElements)
          return `${at}.elements must be an array of 1 to ${LIMITS.contextElements}`;
        for (const [i, e] of b.elements.entries()) {
          const problem = textProblem(e, `${at}.elements[${i}]`, LIMITS.sectionText);
          if (problem !== undefined) return problem;
        }
        break;
      }
      case 'actions': {
        if (!Array.isArray(b.elements) || b.elements.length === 0 || b.elements.length > LIMITS.actionsElements)
          return `${at}.elements must be an array of 1 to ${LIMITS.actionsElements}`;
        for (const [i, e] of b.elements.entries()) {
          const problem = buttonProblem(e, `${at}.elements[${i}]`);
          if (problem !== undefined) return problem;
        }
        break;
      }
      case 'divider':
        break;
      default:
        return `${at}.type ${JSON.stringify(b.type)} is not a block type the sink knows`;
    }
  }
  return undefined;
}

function textProblem(value: unknown, at: string, max: number, only?: 'plain_text'): string | undefined {
  if (typeof value !== 'object' || value === null) return `${at} is not a text object`;
  const { type, text } = value as { type?: unknown; text?: unknown };
  if (type !== 'plain_text' && type !== 'mrkdwn') return `${at}.type must be plain_text or mrkdwn`;
  if (only !== undefined && type !== only) return `${at}.type must be ${only}`;
  if (typeof text !== 'string' || text.length === 0) return `${at}.text must be a non-empty string`;
  if (text.length > max) return `${at}.text has ${text.length} characters (at most ${max})`;
  return undefined;
}

function buttonProblem(value: unknown, at: string): string | undefined {
  if (typeof value !== 'object' || value === null) return `${at} is not an object`;
  const button = value as { type?: unknown; text?: unknown; url?: unknown };
  if (button.type !== 'button') return `${at}.type must be button`;
  const problem = textProblem(button.text, `${at}.text`, LIMITS.buttonText, 'plain_text');
  if (problem !== undefined) return problem;
  if (button.url !== undefined) {
    if (typeof button.url !== 'string' || button.url.length > LIMITS.buttonUrl) return `${at}.url is too long`;
    try {
      new URL(button.url);
    } catch {
      return `${at}.url is not a URL`;
    }
  }
  return undefined;
}
