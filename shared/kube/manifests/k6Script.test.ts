import { describe, expect, it } from '@jest/globals';
import vm from 'node:vm';
import { sampleRequestAt } from '../../../sim/harness/index.js';
import type { RequestMix } from '../../load/index.js';
import { K6_CUSTOM_METRICS, K6_ENV, K6_SUMMARY_MARKER, k6SummarySchema } from '../k6.js';
import { k6Script } from './k6Script.js';

interface LoadedScript {
  options: {
    noConnectionReuse: boolean;
    scenarios: { vllm: Record<string, unknown> };
    summaryTrendStats: string[];
    thresholds: Record<string, string[]>;
  };
  /** Runs one iteration (k6's iterationInTest = `iteration`); returns the arguments of `http.post` or `sse.open`. */
  iterate(iteration?: number): [string, string, { headers: Record<string, string>; timeout: string }];
  handleSummary(data: unknown): { stdout: string };
  /** What the script added to its custom metrics, by metric name. */
  samples: Map<string, Array<number | boolean>>;
  /** The arguments of every `sse.open`. */
  opens: unknown[][];
}

/** A streamed answer as xk6-sse hands it to the script: one `data` event per chunk, 30 ms apart. */
interface SseScript {
  events: string[];
  status: number;
}

/**
 * Runs the script as an ES module, as k6 does, with `__ENV`, a stand-in for `k6/http` that records requests (and
 * answers them with `answer`), `k6/execution` (the iteration number), `k6/metrics` (recording samples) and
 * `require('k6/x/sse')` (xk6-sse: replays `sse` with a clock that moves 30 ms per event).
 */
async function loadScript(
  env: Record<string, string | undefined>,
  options: { answer?: { status: number; body: string }; sse?: SseScript } = {},
): Promise<LoadedScript> {
  const posts: unknown[][] = [];
  const opens: unknown[][] = [];
  const samples = new Map<string, Array<number | boolean>>();
  const execution = { scenario: { iterationInTest: 0 } };
  let now = 1_000_000;
  const FakeDate = { now: () => now };
  class Metric {
    constructor(readonly name: string) {}
    add(value: number | boolean): void {
      samples.set(this.name, [...(samples.get(this.name) ?? []), value]);
    }
  }
  const sse = {
    open: (url: string, params: unknown, setup: (client: unknown) => void) => {
      opens.push([url, (params as { body: string }).body, params]);
      const handlers = new Map<string, (event: unknown) => void>();
      let closed = false;
      setup({
        on: (name: string, fn: (event: unknown) => void) => handlers.set(name, fn),
        close: () => (closed = true),
      });
      for (const data of options.sse?.events ?? []) {
        if (closed) break;
        now += 30;
        handlers.get('event')?.({ data });
      }
      return { status: options.sse?.status ?? 200 };
    },
  };
  const require = (name: string) => {
    if (name !== 'k6/x/sse') throw new Error(`unknown module: ${name}`);
    return sse;
  };
  const context = vm.createContext({
    __ENV: env,
    Math,
    JSON,
    Number,
    String,
    Error,
    isFinite,
    Date: FakeDate,
    require,
  });
  const synthetic = (name: string, value: unknown) =>
    new vm.SyntheticModule(
      ['default', 'Trend', 'Rate'],
      function set() {
        this.setExport('default', value);
        this.setExport('Trend', Metric);
        this.setExport('Rate', Metric);
      },
      { context, identifier: name },
    );
  const modules: Record<string, vm.Module> = {
    'k6/http': synthetic('k6/http', {
      post: (...args: unknown[]) => {
        posts.push(args);
        return options.answer ?? { status: 200, body: '{}' };
      },
    }),
    'k6/execution': synthetic('k6/execution', execution),
    'k6/metrics': synthetic('k6/metrics', {}),
  };
  const module = new vm.SourceTextModule(k6Script(), { context });
  await module.link((specifier) => {
    const found = modules[specifier];
    if (found === undefined) throw new Error(`the script imports ${specifier}`);
    return found;
  });
  await module.evaluate();
  const exports = module.namespace as Record<string, unknown>;
  let next = 0;
  return {
    options: exports.options as LoadedScript['options'],
    iterate: (iteration = next) => {
      execution.scenario.iterationInTest = iteration;
      next = iteration + 1;
      const before = opens.length;
      (exports.default as () => void)();
      return (opens.length > before ? opens.at(-1) : posts.at(-1)) as ReturnType<LoadedScript['iterate']>;
    },
    handleSummary: exports.handleSummary as LoadedScript['handleSummary'],
    samples,
    opens,
  };
}

const base = { [K6_ENV.targetUrl]: 'http://vllm-inference-svc.default.svc:8000/', [K6_ENV.model]: 'ministral' };

describe('Function: k6Script', () => {
  it.each([
    {
      case: 'a load step (the guide: 50 pre-allocated VUs, at most 500)',
      env: { [K6_ENV.executor]: 'constant-arrival-rate', [K6_ENV.rate]: '40', [K6_ENV.durationSeconds]: '60' },
      scenario: {
        executor: 'constant-arrival-rate',
        rate: 40,
        timeUnit: '1s',
        duration: '60s',
        preAllocatedVUs: 50,
        maxVUs: 500,
      },
    },
    {
      case: 'a fractional rate (k6 takes an integer per time unit)',
      env: { [K6_ENV.rate]: '2.5', [K6_ENV.maxVUs]: '20', [K6_ENV.preAllocatedVUs]: '5' },
      scenario: {
        executor: 'constant-arrival-rate',
        rate: 25,
        timeUnit: '10s',
        duration: '60s',
        preAllocatedVUs: 5,
        maxVUs: 20,
      },
    },
    {
      case: 'the warmup (one VU, 100 sequential requests)',
      env: { [K6_ENV.executor]: 'shared-iterations', [K6_ENV.vus]: '1', [K6_ENV.iterations]: '100' },
      scenario: { executor: 'shared-iterations', vus: 1, iterations: 100, maxDuration: '30m' },
    },
  ])('builds the k6 scenario from the environment: $case', async ({ env, scenario }) => {
    // Act
    const script = await loadScript({ ...base, ...env });

    // Assess
    expect(script.options.scenarios).toEqual({ vllm: scenario });
    expect(script.options.noConnectionReuse).toBe(true);
    expect(script.options.summaryTrendStats).toEqual(['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count']);
    expect(script.options.thresholds).toEqual({ http_req_failed: ['rate<1'] });
  });

  it("sends the guide's request: /v1/completions, its prompt with a random 10-letter word, 100 tokens, 0.7, 240 s", async () => {
    // Prepare
    const script = await loadScript({ ...base, [K6_ENV.rate]: '10' });

    // Act
    const [url, payload, params] = script.iterate();
    const [, second] = script.iterate();

    // Assess
    expect(url).toBe('http://vllm-inference-svc.default.svc:8000/v1/completions');
    const body = JSON.parse(payload) as { model: string; prompt: string; max_tokens: number; temperature: number };
    expect(body).toEqual({ model: 'ministral', prompt: expect.any(String), max_tokens: 100, temperature: 0.7 });
    expect(body.prompt).toMatch(
      /^Starting with the word "[a-z]{10}", write a brief technical explanation about cloud computing concepts\. Cover containerization, orchestration, and scalability in about 80 words\.$/,
    );
    expect((JSON.parse(second) as { prompt: string }).prompt).not.toBe(body.prompt);
    expect(params).toMatchObject({ headers: { 'Content-Type': 'application/json' }, timeout: '240s' });
  });

  it('takes the request shape from the environment and pads the prompt to about K6_PROMPT_TOKENS', async () => {
    // Prepare
    const script = await loadScript({
      ...base,
      [K6_ENV.rate]: '10',
      [K6_ENV.maxTokens]: '256',
      [K6_ENV.requestTimeoutSeconds]: '30',
      [K6_ENV.promptTokens]: '200',
    });

    // Act
    const [, payload, params] = script.iterate();

    // Assess
    const body = JSON.parse(payload) as { prompt: string; max_tokens: number };
    expect(body.max_tokens).toBe(256);
    expect(params.timeout).toBe('30s');
    const words = body.prompt.split(/\s+/).length;
    expect(words).toBeGreaterThan(150);
    expect(words).toBeLessThanOrEqual(200);
  });

  it('prints one summary line that the product can parse with k6SummarySchema', async () => {
    // Prepare
    const script = await loadScript({ ...base, [K6_ENV.rate]: '10' });
    // The shape of k6's handleSummary data (metrics' `values` per type: counter, rate, trend).
    const data = {
      state: { testRunDurationMs: 61_250 },
      metrics: {
        iterations: { type: 'counter', values: { count: 598, rate: 9.76 } },
        dropped_iterations: { type: 'counter', values: { count: 2, rate: 0.03 } },
        http_reqs: { type: 'counter', values: { count: 598, rate: 9.76 } },
        http_req_failed: { type: 'rate', values: { rate: 0.01, passes: 6, fails: 592 } },
        http_req_duration: {
          type: 'trend',
          values: { avg: 2510.5, min: 880, med: 2420, max: 7100, 'p(90)': 3050, 'p(95)': 3480, 'p(99)': 6020 },
        },
      },
    };

    // Act
    const { stdout } = script.handleSummary(data);

    // Assess
    expect(stdout.startsWith(K6_SUMMARY_MARKER)).toBe(true);
    expect(stdout.endsWith('\n')).toBe(true);
    const summary = k6SummarySchema.parse(JSON.parse(stdout.slice(K6_SUMMARY_MARKER.length)));
    expect(summary).toEqual({
      executor: 'constant-arrival-rate',
      rate: 10,
      durationSeconds: 61.25,
      iterations: 598,
      droppedIterations: 2,
      httpReqs: 598,
      httpReqFailed: 6,
      iterationsRate: 9.76,
      httpReqDurationMs: { avg: 2510.5, min: 880, med: 2420, max: 7100, p90: 3050, p95: 3480, p99: 6020 },
      ttftMs: null,
      itlMs: null,
      promptTokensAvg: null,
      completionTokensAvg: null,
    });
  });

  it("draws each request's lengths from the mix by k6's iteration number, as the twin's sampler does", async () => {
    // Prepare
    const mix: RequestMix = {
      seed: 7,
      prompt: { distribution: 'uniform', min: 100, max: 900 },
      output: {
        distribution: 'histogram',
        buckets: [
          { tokens: 16, weight: 3 },
          { tokens: 256, weight: 1 },
        ],
      },
    };
    const script = await loadScript({ ...base, [K6_ENV.rate]: '10', [K6_ENV.requestMix]: JSON.stringify(mix) });

    // Act: iterations out of order, as several VUs would run them.
    const sent = [5, 0, 3, 1, 4, 2].map((i) => ({
      i,
      body: JSON.parse(script.iterate(i)[1]) as { prompt: string; max_tokens: number },
    }));

    // Assess
    for (const { i, body } of sent) {
      const expected = sampleRequestAt(mix, i);
      expect(body.max_tokens).toBe(expected.maxTokens);
      // The script pads to about the drawn length (1.3 tokens a word for the guide's part, one for each filler).
      expect(body.prompt.split(' ').length).toBeGreaterThan(expected.promptTokens * 0.8);
      expect(body.prompt.split(' ').length).toBeLessThanOrEqual(expected.promptTokens);
    }
    expect(new Set(sent.map((s) => s.body.max_tokens)).size).toBeGreaterThan(1);
  });

  it("records the tokens of vLLM's usage from a non-streamed answer", async () => {
    // Prepare
    const answer = { status: 200, body: JSON.stringify({ usage: { prompt_tokens: 41, completion_tokens: 100 } }) };
    const script = await loadScript({ ...base, [K6_ENV.rate]: '10' }, { answer });

    // Act
    script.iterate();

    // Assess
    expect(script.samples.get(K6_CUSTOM_METRICS.promptTokens)).toEqual([41]);
    expect(script.samples.get(K6_CUSTOM_METRICS.completionTokens)).toEqual([100]);
    expect(script.samples.get(K6_CUSTOM_METRICS.ttft)).toBeUndefined();
  });

  it('streams with xk6-sse: stream_options.include_usage, TTFT at the first token, the mean gap after it', async () => {
    // Prepare: three token chunks 30 ms apart after a first event at 30 ms, then usage and [DONE].
    const chunk = (text: string) => JSON.stringify({ choices: [{ index: 0, text, finish_reason: null }] });
    const sse = {
      status: 200,
      events: [
        chunk(' a'),
        chunk(' b'),
        chunk(' c'),
        JSON.stringify({ choices: [], usage: { prompt_tokens: 35, completion_tokens: 3, total_tokens: 38 } }),
        '[DONE]',
      ],
    };
    const script = await loadScript({ ...base, [K6_ENV.rate]: '10', [K6_ENV.stream]: 'true' }, { sse });

    // Act
    const [url, payload] = script.iterate();

    // Assess
    expect(url).toBe('http://vllm-inference-svc.default.svc:8000/v1/completions');
    expect(JSON.parse(payload)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(script.samples.get(K6_CUSTOM_METRICS.ttft)).toEqual([30]);
    expect(script.samples.get(K6_CUSTOM_METRICS.itl)).toEqual([30]);
    expect(script.samples.get(K6_CUSTOM_METRICS.completionTokens)).toEqual([3]);
    expect(script.samples.get(K6_CUSTOM_METRICS.streamFailed)).toEqual([false]);
    expect(script.options.thresholds).toEqual({ [K6_CUSTOM_METRICS.streamFailed]: ['rate<1'] });
  });

  it('counts a streamed answer without a token, or with an error status, as failed', async () => {
    // Prepare
    const script = await loadScript(
      { ...base, [K6_ENV.rate]: '10', [K6_ENV.stream]: 'true' },
      { sse: { status: 400, events: [] } },
    );

    // Act
    script.iterate();

    // Assess
    expect(script.samples.get(K6_CUSTOM_METRICS.streamFailed)).toEqual([true]);
    expect(script.samples.get(K6_CUSTOM_METRICS.ttft)).toBeUndefined();
  });

  it('reports TTFT, inter-token latency and the mean tokens in the summary line of a streaming run', async () => {
    // Prepare
    const script = await loadScript({ ...base, [K6_ENV.rate]: '10', [K6_ENV.stream]: 'true' });
    const trend = { avg: 80, min: 20, med: 70, max: 300, 'p(90)': 150, 'p(95)': 200, 'p(99)': 280, count: 598 };
    const data = {
      state: { testRunDurationMs: 61_250 },
      metrics: {
        iterations: { type: 'counter', values: { count: 598, rate: 9.76 } },
        http_reqs: { type: 'counter', values: { count: 598, rate: 9.76 } },
        [K6_CUSTOM_METRICS.streamFailed]: { type: 'rate', values: { rate: 0.005, passes: 3, fails: 595 } },
        [K6_CUSTOM_METRICS.ttft]: { type: 'trend', values: trend },
        [K6_CUSTOM_METRICS.itl]: { type: 'trend', values: { ...trend, avg: 20 } },
        [K6_CUSTOM_METRICS.promptTokens]: { type: 'trend', values: { ...trend, avg: 512.5 } },
        [K6_CUSTOM_METRICS.completionTokens]: { type: 'trend', values: { ...trend, avg: 99.2 } },
      },
    };

    // Act
    const summary = k6SummarySchema.parse(
      JSON.parse(script.handleSummary(data).stdout.slice(K6_SUMMARY_MARKER.length)),
    );

    // Assess
    expect(summary).toMatchObject({
      httpReqFailed: 3,
      ttftMs: { avg: 80, med: 70, p95: 200 },
      itlMs: { avg: 20 },
      promptTokensAvg: 512.5,
      completionTokensAvg: 99.2,
    });
  });

  it.each([
    {
      case: 'no target URL',
      env: { [K6_ENV.model]: 'm', [K6_ENV.rate]: '1' },
      error: 'VLLM_PILOT_TARGET_URL is required',
    },
    { case: 'no rate for a load step', env: base, error: 'VLLM_PILOT_RATE is required' },
    {
      case: 'a rate of zero',
      env: { ...base, [K6_ENV.rate]: '0' },
      error: 'VLLM_PILOT_RATE must be a number > 0, got "0"',
    },
    {
      case: 'an unknown executor',
      env: { ...base, [K6_ENV.executor]: 'ramping-vus' },
      error: 'VLLM_PILOT_EXECUTOR must be',
    },
  ])('stops at start-up with a clear message on $case', async ({ env, error }) => {
    // Act
    const result = loadScript(env);

    // Assess
    await expect(result).rejects.toThrow(error);
  });
});
