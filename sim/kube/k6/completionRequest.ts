import http from 'node:http';
import https from 'node:https';
import { buildPrompt } from '../../load/constantArrival.js';

export interface CompletionShape {
  model: string;
  promptTokens: number;
  maxTokens: number;
}

export interface CompletionOutcome {
  /** HTTP status, or 0 when no response came (connection refused, timeout, stopped). */
  status: number;
  /** Why it failed without a response (error code or the abort reason). */
  error?: string;
}

/**
 * One iteration of the k6 script: `POST <base>/v1/completions` with the guide's prompt (a random word defeats prefix
 * caching), `max_tokens` and temperature 0.7, waiting for the whole answer as `http.post` does.
 */
export function postCompletion(
  baseUrl: string,
  shape: CompletionShape,
  agent: http.Agent,
  signal: AbortSignal,
): Promise<CompletionOutcome> {
  const body = JSON.stringify({
    model: shape.model,
    prompt: buildPrompt(shape.promptTokens),
    max_tokens: shape.maxTokens,
    temperature: 0.7,
  });
  const target = `${baseUrl.replace(/\/$/, '')}/v1/completions`;
  const client = target.startsWith('https:') ? https : http;
  return new Promise((resolve) => {
    const settle = (outcome: CompletionOutcome) => resolve(outcome);
    const req = client.request(
      target,
      {
        method: 'POST',
        agent,
        signal,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => settle({ status: res.statusCode ?? 0 }));
        res.on('error', (error) => settle({ status: 0, error: errorName(error, signal) }));
      },
    );
    req.on('error', (error) => settle({ status: 0, error: errorName(error, signal) }));
    req.end(body);
  });
}

function errorName(error: Error, signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (signal.aborted && typeof reason === 'string') return reason;
  return (error as NodeJS.ErrnoException).code ?? error.name;
}
