import { describe, expect, it } from '@jest/globals';
import vm from 'node:vm';
import { K6_ENV, K6_SUMMARY_MARKER, k6SummarySchema } from '../k6.js';
import { k6Script } from './k6Script.js';

interface LoadedScript {
  options: { noConnectionReuse: boolean; scenarios: { vllm: Record<string, unknown> }; summaryTrendStats: string[] };
  /** Runs one iteration; returns the arguments of `http.post`. */
  iterate(): [string, string, { headers: Record<string, string>; timeout: string }];
  handleSummary(data: unknown): { stdout: string };
}

/**
 * Runs the script as an ES module, as k6 does, with `__ENV` and a stand-in for `k6/http` that records requests.
 */
async function loadScript(env: Record<string, string | undefined>): Promise<LoadedScript> {
  const posts: unknown[][] = [];
  const context = vm.createContext({ __ENV: env, Math, JSON, Number, String, Error, isFinite });
  const http = new vm.SyntheticModule(
    ['default'],
    function setHttp() {
      this.setExport('default', { post: (...args: unknown[]) => posts.push(args) });
    },
    { context },
  );
  const module = new vm.SourceTextModule(k6Script(), { context });
  await module.link((specifier) => {
    if (specifier !== 'k6/http') throw new Error(`the script imports ${specifier}`);
    return http;
  });
  await module.evaluate();
  const exports = module.namespace as Record<string, unknown>;
  return {
    options: exports.options as LoadedScript['options'],
    iterate: () => {
      (exports.default as () => void)();
      return posts.at(-1) as ReturnType<LoadedScript['iterate']>;
    },
    handleSummary: exports.handleSummary as LoadedScript['handleSummary'],
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
    expect(script.options.summaryTrendStats).toEqual(['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)']);
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
