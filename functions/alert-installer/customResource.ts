import { setTimeout as sleepFor } from 'node:timers/promises';
import * as z from 'zod';
import { CustomResourceResponseError } from './errors.js';

/**
 * CloudFormation custom resources, as the CloudFormation user guide describes them ("Custom resource request objects"
 * and "response objects"): the request Lambda receives, and the response it PUTs to the pre-signed S3 URL. The stack
 * waits for that response (up to an hour), so every request, even one this function cannot read, is answered.
 */

export const customResourceRequestSchema = z.looseObject({
  RequestType: z.enum(['Create', 'Update', 'Delete'], { error: 'must be Create, Update or Delete' }),
  ResponseURL: z.url({ protocol: /^https?$/, error: 'must be the pre-signed http(s) URL CloudFormation gives' }),
  StackId: z.string({ error: 'is required' }),
  RequestId: z.string({ error: 'is required' }),
  LogicalResourceId: z.string({ error: 'is required' }),
  ResourceType: z.string().optional(),
  /** Absent on Create; the id this function returned before on Update and Delete. */
  PhysicalResourceId: z.string().optional(),
  ResourceProperties: z.record(z.string(), z.unknown()).optional(),
  OldResourceProperties: z.record(z.string(), z.unknown()).optional(),
});
export type CustomResourceRequest = z.output<typeof customResourceRequestSchema>;

/** What is sent back (the "response object"); `Data` values are readable with Fn::GetAtt. */
export interface CustomResourceResponse {
  Status: 'SUCCESS' | 'FAILED';
  /** Required with FAILED: CloudFormation shows it in the stack events. */
  Reason?: string;
  PhysicalResourceId: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  Data?: Record<string, string>;
}

/** CloudFormation refuses a response body above 4,096 bytes ("response objects"). */
export const MAX_RESPONSE_BYTES = 4096;

export interface SendResponseOptions {
  /** Per attempt (default 10 s). */
  timeoutMs?: number;
  /** Attempts in all (default 3), one second apart, doubling. */
  attempts?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * PUTs `response` to the pre-signed `url` with an empty Content-Type (the signature covers no content type; this is
 * what AWS's own cfn-response module sends). A long Reason is cut so the body fits CloudFormation's limit. Retries a
 * network error or a 5xx; throws CustomResourceResponseError when every attempt failed.
 */
export async function sendCustomResourceResponse(
  url: string,
  response: CustomResourceResponse,
  options: SendResponseOptions = {},
): Promise<void> {
  const body = fitted(response);
  const attempts = options.attempts ?? 3;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const send = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => sleepFor(ms));
  let problem = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      const answer = await send(url, {
        method: 'PUT',
        body,
        headers: { 'content-type': '', 'content-length': String(Buffer.byteLength(body)) },
        signal: controller.signal,
      });
      await answer.arrayBuffer().catch(() => undefined);
      if (answer.ok) return;
      problem = `HTTP ${answer.status} from the response URL`;
      // A 4xx (an expired URL, a body S3 refuses) fails the same way again.
      if (answer.status < 500) break;
    } catch (error) {
      problem = (error as Error).message;
    } finally {
      clearTimeout(timer);
    }
    if (attempt < attempts) await sleep(1000 * 2 ** (attempt - 1));
  }
  throw new CustomResourceResponseError(`${problem} (${attempts} attempt${attempts === 1 ? '' : 's'} at most)`);
}

/** The JSON body, with Reason cut (and marked) so the whole fits MAX_RESPONSE_BYTES. */
export function fitted(response: CustomResourceResponse): string {
  const whole = JSON.stringify(response);
  if (Buffer.byteLength(whole) <= MAX_RESPONSE_BYTES || response.Reason === undefined) return whole;
  const overflow = Buffer.byteLength(whole) - MAX_RESPONSE_BYTES;
  const marker = ' … (cut; see the function log)';
  let reason = response.Reason;
  // JSON escaping can make a character cost several bytes: cut, measure, repeat.
  let keep = Math.max(0, reason.length - overflow - marker.length);
  for (;;) {
    reason = response.Reason.slice(0, keep) + marker;
    const body = JSON.stringify({ ...response, Reason: reason });
    if (Buffer.byteLength(body) <= MAX_RESPONSE_BYTES || keep === 0) return body;
    keep = Math.max(0, keep - Math.max(16, Buffer.byteLength(body) - MAX_RESPONSE_BYTES));
  }
}
