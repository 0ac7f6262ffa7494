import http from 'node:http';
import https from 'node:https';
import type { Clock } from '../../shared/clock/index.js';

/** What one completion request asks for. */
export interface CompletionRequestShape {
  model: string;
  prompt: string;
  maxTokens: number;
  /** Stream the answer (`stream: true`, usage in the last chunk), as the k6 script does with xk6-sse. */
  stream: boolean;
}

/** How one request went, as the k6 script measures it. */
export interface CompletionResult {
  /** HTTP status (0 when no answer came). */
  status: number;
  /** vLLM's usage: from the body, or from the last chunk of a stream. */
  usage?: { promptTokens: number; completionTokens: number };
  /** Streaming: from sending to the first token's chunk, ms. */
  ttftMs?: number;
  /** Streaming: the mean gap between the token chunks after the first, ms (with at least two). */
  itlMs?: number;
  /** A stream that ended without [DONE] or a token, or a chunk that is not JSON. */
  streamError?: string;
}

interface UsageBody {
  prompt_tokens?: number;
  completion_tokens?: number;
}

function usageOf(body: UsageBody | undefined): CompletionResult['usage'] {
  if (typeof body?.prompt_tokens !== 'number' || typeof body.completion_tokens !== 'number') return undefined;
  return { promptTokens: body.prompt_tokens, completionTokens: body.completion_tokens };
}

/**
 * POSTs one completion to `<base>/v1/completions` and reads the answer as the k6 script does: the whole body, or the
 * SSE stream event by event (`data: {json}` … `data: [DONE]`), timing the first token's event and the later ones on
 * `clock`. Rejects on a transport error (the caller names it).
 */
export function sendCompletion(
  baseUrl: string,
  shape: CompletionRequestShape,
  agent: http.Agent,
  signal: AbortSignal,
  clock: Clock,
): Promise<CompletionResult> {
  const body = JSON.stringify({
    model: shape.model,
    prompt: shape.prompt,
    max_tokens: shape.maxTokens,
    temperature: 0.7,
    ...(shape.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
  const target = `${baseUrl.replace(/\/$/, '')}/v1/completions`;
  const client = target.startsWith('https:') ? https : http;
  const sentAt = clock.now();
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: 'POST',
        agent,
        signal,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        res.on('error', reject);
        if (!shape.stream || status !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            if (status !== 200) return resolve({ status });
            try {
              const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { usage?: UsageBody };
              const usage = usageOf(parsed.usage);
              resolve(usage === undefined ? { status } : { status, usage });
            } catch {
              resolve({ status });
            }
          });
          return;
        }
        const stream = new SseReader(sentAt, clock);
        res.setEncoding('utf8');
        res.on('data', (text: string) => stream.push(text));
        res.on('end', () => resolve({ status, ...stream.result() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Splits an SSE body into events as they arrive and times the ones that carry a token. */
class SseReader {
  #buffer = '';
  #first: number | undefined;
  #last: number | undefined;
  #tokens = 0;
  #done = false;
  #usage: CompletionResult['usage'];
  #error: string | undefined;

  constructor(
    private readonly sentAt: number,
    private readonly clock: Clock,
  ) {}

  push(text: string): void {
    this.#buffer += text;
    for (let end = this.#buffer.indexOf('\n\n'); end >= 0; end = this.#buffer.indexOf('\n\n')) {
      const event = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      this.#event(event);
    }
  }

  #event(event: string): void {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data === '') return;
    if (data === '[DONE]') {
      this.#done = true;
      return;
    }
    let chunk: { usage?: UsageBody | null; choices?: Array<{ text?: string }> };
    try {
      chunk = JSON.parse(data) as typeof chunk;
    } catch {
      this.#error ??= `a chunk is not JSON: ${data.slice(0, 60)}`;
      return;
    }
    this.#usage = usageOf(chunk.usage ?? undefined) ?? this.#usage;
    if (!chunk.choices?.[0]?.text) return;
    const now = this.clock.now();
    this.#first ??= now;
    this.#last = now;
    this.#tokens += 1;
  }

  result(): Omit<CompletionResult, 'status'> {
    const error =
      this.#error ??
      (!this.#done ? 'the stream ended without [DONE]' : this.#first === undefined ? 'no token came' : undefined);
    return {
      ...(this.#usage === undefined ? {} : { usage: this.#usage }),
      ...(this.#first === undefined ? {} : { ttftMs: this.#first - this.sentAt }),
      ...(this.#tokens > 1 && this.#first !== undefined && this.#last !== undefined
        ? { itlMs: (this.#last - this.#first) / (this.#tokens - 1) }
        : {}),
      ...(error === undefined ? {} : { streamError: error }),
    };
  }
}
