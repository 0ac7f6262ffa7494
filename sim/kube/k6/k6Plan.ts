import { K6_ENV, K6_EXECUTORS } from '../../../shared/kube/index.js';
import { requestMixSchema, type RequestMix } from '../../../shared/load/index.js';
import { K6ConfigInvalidError } from './errors.js';

/**
 * Defaults for what the env may leave out: the ones of the product's k6 script (shared/kube/manifests/k6Script.ts,
 * after the AWS guide: constant-arrival-rate for 60 s, preAllocatedVUs 50 / maxVUs 500, max_tokens 100, a 240 s
 * request timeout; shared-iterations 1 VU x 100 iterations within 30 min) and k6's own gracefulStop (30 s). The
 * script's prompt without K6_PROMPT_TOKENS is the guide's (~35 tokens). The target, the model and the rate have no
 * default: the script throws without them, and so does the emulation.
 */
export const K6_DEFAULTS = {
  executor: 'constant-arrival-rate',
  promptTokens: 35,
  maxTokens: 100,
  requestTimeoutSeconds: 240,
  durationSeconds: 60,
  preAllocatedVUs: 50,
  maxVUs: 500,
  vus: 1,
  iterations: 100,
  gracefulStopSeconds: 30,
  maxDurationSeconds: 1_800,
} as const;

interface Common {
  /** The script path given to `k6 run` (the emulation does not read it: the env drives the load). */
  script: string;
  targetUrl: string;
  model: string;
  promptTokens: number;
  maxTokens: number;
  requestTimeoutSeconds: number;
  /** The request mix the script draws lengths from (K6_ENV.requestMix); absent: promptTokens and maxTokens. */
  requestMix?: RequestMix;
  /** Stream every answer and measure TTFT and inter-token latency (K6_ENV.stream); absent: not streamed. */
  stream?: boolean;
  /** Where k6's REST API listens (`--address`, k6's default localhost:6565): `host:port`. */
  restAddress: string;
}

/** k6's default REST API address (`k6 run --address`). */
export const K6_DEFAULT_REST_ADDRESS = 'localhost:6565';

/**
 * Whether a REST API at `address` is reachable from outside the Pod (the API server's Pod proxy dials the Pod's IP):
 * only when it listens on every interface (`0.0.0.0:6565`, `[::]:6565`, `:6565`), not on localhost.
 */
export function listensOnPodAddress(address: string): boolean {
  const host = address.slice(0, address.lastIndexOf(':'));
  return ['', '0.0.0.0', '[::]', '::'].includes(host);
}

/** A k6 run, as the container's env and args describe it. */
export type K6Plan =
  | (Common & {
      executor: typeof K6_EXECUTORS.constantArrivalRate;
      rate: number;
      durationSeconds: number;
      preAllocatedVUs: number;
      maxVUs: number;
    })
  | (Common & { executor: typeof K6_EXECUTORS.sharedIterations; vus: number; iterations: number });

export interface K6Container {
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
}

/** The environment variables k6 itself reads as options (https://grafana.com/docs/k6/latest/using-k6/k6-options/). */
const K6_OWN_ENV = { vus: 'K6_VUS', iterations: 'K6_ITERATIONS' } as const;

/** k6 flags that take a value (so the next token is not the script). */
const VALUE_FLAGS = new Set([
  '-o',
  '--out',
  '-e',
  '--env',
  '-u',
  '--vus',
  '-i',
  '--iterations',
  '-d',
  '--duration',
  '--tag',
  '--summary-export',
  '--summary-trend-stats',
  '--log-output',
  '--log-format',
  '-c',
  '--config',
  '-a',
  '--address',
]);

/**
 * Reads a k6 container: `k6 run [flags] <script>` (the image's entrypoint is `k6`, so args usually start with
 * `run`), with `--vus/-u` and `--iterations/-i` (which, as in k6, replace the script's scenarios with
 * shared-iterations) and `-e/--env NAME=VALUE`, plus the K6_* variables of shared/kube/k6.ts from `env[].value`.
 * Throws K6ConfigInvalidError naming the variable or flag that is wrong.
 */
export function k6PlanFromContainer(container: K6Container): K6Plan {
  const env = new Map<string, string>();
  for (const entry of container.env ?? []) {
    if (entry.value !== undefined) env.set(entry.name, entry.value);
    else if (entry.valueFrom !== undefined && (Object.values(K6_ENV) as string[]).includes(entry.name))
      throw new K6ConfigInvalidError(
        `env ${entry.name}`,
        'valueFrom',
        'a literal `value` (the twin resolves no references)',
      );
  }
  const cli = parseArgs([...(container.command ?? []), ...(container.args ?? [])]);
  for (const [name, value] of cli.env) env.set(name, value);

  const common: Common = {
    script: cli.script,
    targetUrl: url(env, K6_ENV.targetUrl),
    model: required(env, K6_ENV.model),
    promptTokens: int(env, K6_ENV.promptTokens, K6_DEFAULTS.promptTokens),
    maxTokens: int(env, K6_ENV.maxTokens, K6_DEFAULTS.maxTokens),
    requestTimeoutSeconds: num(env, K6_ENV.requestTimeoutSeconds, K6_DEFAULTS.requestTimeoutSeconds),
    ...requestMix(env),
    ...(flag(env, K6_ENV.stream) ? { stream: true } : {}),
    restAddress: cli.address ?? K6_DEFAULT_REST_ADDRESS,
  };
  // k6's own options (flags, then its K6_VUS / K6_ITERATIONS variables) replace the script's scenarios.
  const vus = cli.vus ?? optionalInt(env, K6_OWN_ENV.vus);
  const iterations = cli.iterations ?? optionalInt(env, K6_OWN_ENV.iterations);
  if (vus !== undefined || iterations !== undefined) {
    return {
      ...common,
      executor: K6_EXECUTORS.sharedIterations,
      vus: vus ?? K6_DEFAULTS.vus,
      // `--vus N` alone is k6's per-vu-iterations with one iteration per VU: N iterations in all.
      iterations: iterations ?? vus ?? K6_DEFAULTS.vus,
    };
  }
  const executor = env.get(K6_ENV.executor) || K6_DEFAULTS.executor;
  if (executor === K6_EXECUTORS.sharedIterations) {
    const vus = int(env, K6_ENV.vus, K6_DEFAULTS.vus);
    return { ...common, executor, vus, iterations: int(env, K6_ENV.iterations, K6_DEFAULTS.iterations) };
  }
  if (executor === K6_EXECUTORS.constantArrivalRate) {
    const preAllocatedVUs = int(env, K6_ENV.preAllocatedVUs, K6_DEFAULTS.preAllocatedVUs);
    const maxVUs = int(env, K6_ENV.maxVUs, Math.max(K6_DEFAULTS.maxVUs, preAllocatedVUs));
    if (maxVUs < preAllocatedVUs)
      throw new K6ConfigInvalidError(
        `env ${K6_ENV.maxVUs}`,
        maxVUs,
        `at least ${K6_ENV.preAllocatedVUs} (${preAllocatedVUs})`,
      );
    return {
      ...common,
      executor,
      rate: num(env, K6_ENV.rate),
      durationSeconds: num(env, K6_ENV.durationSeconds, K6_DEFAULTS.durationSeconds),
      preAllocatedVUs,
      maxVUs,
    };
  }
  throw new K6ConfigInvalidError(
    `env ${K6_ENV.executor}`,
    executor,
    `${K6_EXECUTORS.constantArrivalRate} or ${K6_EXECUTORS.sharedIterations} (or --vus/--iterations on the command line)`,
  );
}

function parseArgs(tokens: readonly string[]): {
  script: string;
  vus?: number;
  iterations?: number;
  address?: string;
  env: Map<string, string>;
} {
  const runAt = tokens.indexOf('run');
  if (runAt < 0) throw new K6ConfigInvalidError('args', tokens, '`run [flags] <script>` (k6 run)');
  const env = new Map<string, string>();
  let script: string | undefined;
  let vus: number | undefined;
  let iterations: number | undefined;
  let address: string | undefined;
  for (let i = runAt + 1; i < tokens.length; i++) {
    const token = tokens[i] as string;
    if (!token.startsWith('-')) {
      script ??= token;
      continue;
    }
    const eq = token.startsWith('--') ? token.indexOf('=') : -1;
    const flag = eq >= 0 ? token.slice(0, eq) : token;
    if (!VALUE_FLAGS.has(flag)) continue;
    const value = eq >= 0 ? token.slice(eq + 1) : tokens[++i];
    if (value === undefined) throw new K6ConfigInvalidError(`args ${flag}`, undefined, 'a value after the flag');
    if (flag === '-u' || flag === '--vus') vus = positiveInt(`args ${flag}`, value);
    else if (flag === '-i' || flag === '--iterations') iterations = positiveInt(`args ${flag}`, value);
    else if (flag === '-d' || flag === '--duration')
      throw new K6ConfigInvalidError(
        `args ${flag}`,
        value,
        'no --duration: the emulation runs shared-iterations (--vus, --iterations) or the K6_EXECUTOR scenario',
      );
    else if (flag === '-a' || flag === '--address') {
      if (!/^(\[[0-9A-Fa-f:]*\]|[A-Za-z0-9.-]*):\d{1,5}$/.test(value))
        throw new K6ConfigInvalidError(`args ${flag}`, value, 'host:port, e.g. 0.0.0.0:6565');
      address = value;
    } else if (flag === '-e' || flag === '--env') {
      const at = value.indexOf('=');
      if (at <= 0) throw new K6ConfigInvalidError(`args ${flag}`, value, 'NAME=VALUE');
      env.set(value.slice(0, at), value.slice(at + 1));
    }
  }
  if (script === undefined)
    throw new K6ConfigInvalidError('args', tokens, 'a script after `run` (e.g. run /scripts/load.js)');
  return {
    script,
    ...(vus !== undefined ? { vus } : {}),
    ...(iterations !== undefined ? { iterations } : {}),
    ...(address !== undefined ? { address } : {}),
    env,
  };
}

function required(env: Map<string, string>, name: string): string {
  const value = env.get(name);
  if (value === undefined || value.trim() === '')
    throw new K6ConfigInvalidError(`env ${name}`, value, 'a non-empty value');
  return value.trim();
}

function url(env: Map<string, string>, name: string): string {
  const value = required(env, name);
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new K6ConfigInvalidError(
      `env ${name}`,
      value,
      'an http:// URL such as http://vllm-inference-svc.default.svc:8000',
    );
  }
  return value;
}

function num(env: Map<string, string>, name: string, fallback?: number): number {
  const text = env.get(name);
  if (text === undefined || text.trim() === '') {
    if (fallback !== undefined) return fallback;
    throw new K6ConfigInvalidError(`env ${name}`, text, 'a positive number');
  }
  const n = Number(text);
  if (!(Number.isFinite(n) && n > 0)) throw new K6ConfigInvalidError(`env ${name}`, text, 'a positive number');
  return n;
}

function int(env: Map<string, string>, name: string, fallback: number): number {
  const text = env.get(name);
  if (text === undefined || text.trim() === '') return fallback;
  return positiveInt(`env ${name}`, text);
}

function optionalInt(env: Map<string, string>, name: string): number | undefined {
  const text = env.get(name);
  return text === undefined || text.trim() === '' ? undefined : positiveInt(`env ${name}`, text);
}

function positiveInt(fieldName: string, text: string): number {
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(n) || n <= 0)
    throw new K6ConfigInvalidError(fieldName, text, 'a positive integer');
  return n;
}

/** Longest length a mix may name (the script draws whatever it is given; the product bounds it by the context). */
const MIX_MAX_TOKENS = 1_000_000;

/** K6_ENV.requestMix: JSON `{seed, prompt, output}`, read as the script's JSON.parse would, then validated. */
function requestMix(env: Map<string, string>): { requestMix?: RequestMix } {
  const text = env.get(K6_ENV.requestMix);
  if (text === undefined || text.trim() === '') return {};
  const accepted = 'JSON {"seed":1,"prompt":<distribution>,"output":<distribution>} (shared/load)';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new K6ConfigInvalidError(`env ${K6_ENV.requestMix}`, text, accepted);
  }
  const parsed = requestMixSchema(MIX_MAX_TOKENS).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue === undefined ? '' : `${issue.path.join('.')}: ${issue.message}`;
    throw new K6ConfigInvalidError(`env ${K6_ENV.requestMix}`, text, `${accepted}; ${at}`);
  }
  return { requestMix: parsed.data };
}

/** `true` or `false` (absent: false), as the script compares it. */
function flag(env: Map<string, string>, name: string): boolean {
  const text = env.get(name);
  if (text === undefined || text === '' || text === 'false') return false;
  if (text === 'true') return true;
  throw new K6ConfigInvalidError(`env ${name}`, text, 'true or false');
}
