import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { systemClock } from '../../shared/clock/index.js';
import { loadProfile } from '../profile/loadProfile.js';
import type { Profile } from '../profile/profile.js';
import type { ReplicaIdentity } from './telemetry.js';
import { VllmConfigInvalidError } from './errors.js';
import { startVllmReplica, type VllmReplica } from './server.js';

const identity: ReplicaIdentity = {
  pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q',
  namespace: 'default',
  deployment: 'vllm-inference-app',
  container: 'vllm',
  node: 'ip-10-0-1-17.us-east-2.compute.internal',
  gpuIndex: 0,
  gpuUuid: 'GPU-5c8f1e2a-3b4d-4e6f-8a9b-0c1d2e3f4a5b',
  pciBusId: '00000000:30:00.0',
};

const MODEL = 'mistralai/Ministral-3-8B-Instruct-2512';
const GUIDE_PROMPT =
  'Starting with the word "throughout", write a brief technical explanation about cloud computing concepts. ' +
  'Cover containerization, orchestration, and scalability in about 80 words.';

let profile: Profile;
let replica: VllmReplica;
let healthBeforeLoad = 0;
let completionBeforeLoad = 0;

async function post(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${replica.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

async function metricValue(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = await (await fetch(replica.metricsUrl)).text();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([label, value]) => line.includes(`${label}="${value}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  const demo = await loadProfile('demo');
  // The demo profile with a shorter model load, so the suite stays fast.
  profile = { ...demo, startup: { ...demo.startup, modelLoadSeconds: 0.3 } };
  replica = await startVllmReplica({ profile, identity, clock: systemClock });
  healthBeforeLoad = (await fetch(`${replica.url}/health`)).status;
  completionBeforeLoad = (await post('/v1/completions', { model: MODEL, prompt: 'hi', max_tokens: 2 })).status;
  await waitFor(async () => (await fetch(`${replica.url}/health`)).status === 200, 'the model to load');
});

afterAll(async () => {
  await replica.stop();
});

describe('Function: startVllmReplica', () => {
  it('answers 503 while the model loads, then 200 on /health', () => {
    // Assess
    expect(healthBeforeLoad).toBe(503);
    expect(completionBeforeLoad).toBe(503);
    expect(replica.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(replica.telemetry().loaded).toBe(true);
  });

  it('serves a non-streaming completion with usage, max_tokens tokens and finish_reason length', async () => {
    // Act
    const response = await post('/v1/completions', {
      model: MODEL,
      prompt: GUIDE_PROMPT,
      max_tokens: 8,
      temperature: 0.7,
    });
    const body = (await response.json()) as {
      object: string;
      model: string;
      choices: Array<{ text: string; finish_reason: string }>;
      usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    };

    // Assess
    expect(response.status).toBe(200);
    expect(body.object).toBe('text_completion');
    expect(body.model).toBe(MODEL);
    expect(body.choices[0]?.finish_reason).toBe('length');
    expect(body.choices[0]?.text.length).toBeGreaterThan(0);
    expect(body.usage).toMatchObject({ prompt_tokens: 35, completion_tokens: 8, total_tokens: 43 });
  });

  it('streams one SSE chunk per token, then the usage chunk and [DONE]', async () => {
    // Act
    const response = await post('/v1/completions', {
      model: MODEL,
      prompt: [1, 2, 3, 4, 5, 6, 7],
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    });
    const text = await response.text();
    const events = text.split('\n\n').filter((part) => part.length > 0);

    // Assess
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(events.every((event) => event.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map(
      (event) =>
        JSON.parse(event.slice('data: '.length)) as {
          choices: Array<{ text: string; finish_reason: string | null }>;
          usage?: { prompt_tokens: number; completion_tokens: number };
        },
    );
    const tokenChunks = chunks.filter((chunk) => chunk.choices.length > 0);
    expect(tokenChunks).toHaveLength(6);
    expect(tokenChunks.map((chunk) => chunk.choices[0]?.finish_reason)).toEqual([
      null,
      null,
      null,
      null,
      null,
      'length',
    ]);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 6, total_tokens: 13 },
    });
  });

  it('lists the served model with max_model_len on /v1/models', async () => {
    // Act
    const response = await fetch(`${replica.url}/v1/models`);
    const body = (await response.json()) as {
      object: string;
      data: Array<{ id: string; max_model_len: number; owned_by: string }>;
    };

    // Assess
    expect(response.status).toBe(200);
    expect(body.object).toBe('list');
    expect(body.data).toEqual([expect.objectContaining({ id: MODEL, max_model_len: 4096, owned_by: 'vllm' })]);
  });

  it.each([
    {
      case: 'an unknown model (404 NotFoundError, as vLLM)',
      body: { model: 'other/model', prompt: 'hi', max_tokens: 4 },
      status: 404,
      type: 'NotFoundError',
      message: 'The model `other/model` does not exist.',
    },
    {
      case: 'prompt + max_tokens over max_model_len',
      body: { model: MODEL, prompt: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], max_tokens: 4090 },
      status: 400,
      type: 'BadRequestError',
      message:
        "'max_tokens' or 'max_completion_tokens' is too large: 4090. This model's maximum context length is 4096 tokens and your request has 10 input tokens (4090 > 4096 - 10).",
    },
    {
      case: 'max_tokens 0',
      body: { model: MODEL, prompt: 'hi', max_tokens: 0 },
      status: 400,
      type: 'BadRequestError',
      message: 'max_tokens must be at least 1, got 0.',
    },
    {
      case: 'a max_tokens that is not an integer',
      body: { model: MODEL, prompt: 'hi', max_tokens: 'many' },
      status: 400,
      type: 'BadRequestError',
      message: 'max_tokens',
    },
    {
      case: 'a body that is not JSON',
      body: '{"model": ',
      status: 400,
      type: 'BadRequestError',
      message: 'Invalid JSON body',
    },
  ])('rejects $case with an OpenAI error body', async ({ body, status, type, message }) => {
    // Act
    const response = await post('/v1/completions', body);
    const error = ((await response.json()) as { error: { message: string; type: string; code: number } }).error;

    // Assess
    expect(response.status).toBe(status);
    expect(error.type).toBe(type);
    expect(error.code).toBe(status);
    expect(error.message).toContain(message);
  });

  it('exposes vLLM metrics for the served requests on /metrics, in both name eras for vLLM 0.11', async () => {
    // Act
    const response = await fetch(replica.metricsUrl);
    const text = await response.text();

    // Assess
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(text).toContain('# TYPE vllm:e2e_request_latency_seconds histogram');
    expect(text).toContain(`vllm:kv_cache_usage_perc{engine="0",model_name="${MODEL}"}`);
    expect(text).toContain(`vllm:gpu_cache_usage_perc{engine="0",model_name="${MODEL}"}`);
    expect(text).toContain('num_gpu_blocks="256"');
    expect(await metricValue('vllm:request_success_total', { finished_reason: 'length' })).toBeGreaterThanOrEqual(2);
    expect(await metricValue('vllm:e2e_request_latency_seconds_count')).toBeGreaterThanOrEqual(2);
    expect(
      await metricValue('http_requests_total', { handler: '/v1/completions', status: '4xx' }),
    ).toBeGreaterThanOrEqual(5);
    expect(text).not.toContain('handler="/metrics"');
  });

  it('aborts a request whose client disconnects (finished_reason abort)', async () => {
    // Prepare
    const abortsBefore = (await metricValue('vllm:request_success_total', { finished_reason: 'abort' })) ?? 0;
    const controller = new AbortController();
    const response = await post(
      '/v1/completions',
      { model: MODEL, prompt: 'hi', max_tokens: 3000, stream: true },
      controller.signal,
    );
    const reader = response.body?.getReader();
    await reader?.read();

    // Act
    controller.abort();

    // Assess
    await waitFor(
      async () => ((await metricValue('vllm:request_success_total', { finished_reason: 'abort' })) ?? 0) > abortsBefore,
      'the abort to be counted',
    );
    expect(await metricValue('vllm:num_requests_running')).toBe(0);
  });

  it('reports telemetry for the GPU exporter', () => {
    // Act
    const telemetry = replica.telemetry();

    // Assess
    expect(telemetry.busySecondsTotal).toBeGreaterThan(0);
    expect(telemetry.generationTokensTotal).toBeGreaterThanOrEqual(14);
    expect(telemetry.requestsReceivedTotal).toBeGreaterThan(10);
  });
});

describe('Function: startVllmReplica with container-arg overrides', () => {
  it('serves under --served-model-name with --max-model-len, and releases its port on stop()', async () => {
    // Prepare
    const other = await startVllmReplica({
      profile,
      identity,
      clock: systemClock,
      overrides: { servedModelName: 'ministral', maxModelLen: 2048, maxNumSeqs: 4 },
    });
    await waitFor(async () => (await fetch(`${other.url}/health`)).status === 200, 'the second replica to load');

    // Act
    const models = (await (await fetch(`${other.url}/v1/models`)).json()) as {
      data: Array<{ id: string; root: string; max_model_len: number }>;
    };
    const completion = await fetch(`${other.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'ministral', prompt: 'hello', max_tokens: 2 }),
    });
    const metrics = await (await fetch(other.metricsUrl)).text();
    await other.stop();

    // Assess
    expect(models.data[0]).toMatchObject({ id: 'ministral', root: MODEL, max_model_len: 2048 });
    expect(completion.status).toBe(200);
    expect(metrics).toContain('vllm:num_requests_running{engine="0",model_name="ministral"}');
    expect(metrics).toContain('vllm:request_prompt_tokens_bucket{engine="0",le="2000.0",model_name="ministral"}');
    await expect(fetch(`${other.url}/health`)).rejects.toThrow();
  });

  it('rejects an out-of-range --gpu-memory-utilization, naming the field', async () => {
    // Act
    const start = startVllmReplica({ profile, identity, clock: systemClock, overrides: { gpuMemoryUtilization: 1.5 } });

    // Assess
    await expect(start).rejects.toThrow(VllmConfigInvalidError);
    await expect(start).rejects.toThrow('overrides.gpuMemoryUtilization');
  });
});
