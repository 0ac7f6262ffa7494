import { readFileSync } from 'node:fs';
import {
  loadProfile,
  type Profile,
  runConstantArrivalLoad,
  startTwin,
  type StartTwinOptions,
  type Twin,
} from '../../sim/harness/index.js';
import { postJson } from './http.js';

/** The demo request shape of the AWS guide's k6 script: a 35-token prompt, 32 tokens out. */
export const DEMO_SHAPE = { promptTokens: 35, maxTokens: 32 } as const;

/**
 * A short calibration on the demo twin (two 5 s steps, 10 and 40 req/s, the demo request shape, rollout and readiness
 * polled every second): enough to derive thresholds and a capacity, in about half a minute.
 */
export const FAST_TWIN_CALIBRATION = {
  request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
  warmup: { requests: 10 },
  plan: { rates: [10, 40], holdSeconds: 5, restSeconds: 1 },
  rollout: { timeoutSeconds: 60, pollSeconds: 1 },
  readiness: { timeoutSeconds: 120, pollSeconds: 1 },
} as const;

/** What a test may change in the demo profile. */
export type DemoOverrides = Partial<Pick<Profile, 'replicas' | 'vllmVersion' | 'amp' | 'engine' | 'gpu'>>;

/**
 * No AMP ingestion lag unless a test asks for it: the demo profile has 5 s ± 2 s, which would make every test of
 * other behaviour wait for its data; the lag has its own tests (sim/prometheus/amp.test.ts).
 */
const NO_AMP_LAG: Profile['amp'] = { ingestionLagSeconds: 0, ingestionJitterSeconds: 0 };

/** The built-in demo profile with some fields replaced (the twin validates nothing again: keep them valid). */
export async function demoProfile(overrides: DemoOverrides = {}): Promise<Profile> {
  return { ...(await loadProfile('demo')), amp: NO_AMP_LAG, ...overrides };
}

/**
 * Starts a twin of the demo profile (Prometheus must be installed: the tests never install it); `twin` passes the
 * twin's own options (the alerting engine).
 */
export async function startDemoTwin(
  overrides: DemoOverrides = {},
  stateFile?: string,
  twin: Pick<StartTwinOptions, 'alerting'> = {},
): Promise<Twin> {
  return startTwin({
    profile: await demoProfile(overrides),
    allowInstallPrometheus: false,
    ...(stateFile === undefined ? {} : { stateFile }),
    ...twin,
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Sends each replica its warm-up requests (the profile's `startup.warmupRequests`, at once) and waits for them, so
 * that measurements afterwards see the warmed-up engine, as the guide's warm-up Job does before a load test.
 */
export async function warmUp(twin: Twin): Promise<void> {
  const requests = twin.state.replicas.flatMap((replica) =>
    Array.from({ length: twin.profile.startup.warmupRequests }, () =>
      postJson(`${replica.url}/v1/completions`, {
        model: twin.state.model,
        prompt: 'Warm up the engine.',
        max_tokens: DEMO_SHAPE.maxTokens,
      }),
    ),
  );
  const answers = await Promise.all(requests);
  const failed = answers.filter((answer) => answer.status !== 200);
  if (failed.length > 0) throw new Error(`warm-up: ${failed.length} requests failed (first: ${failed[0]?.text})`);
}

/** The process has exited: no such PID, or a zombie nobody has reaped yet (containers without an init). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Polls `check` every 100 ms until it holds or `attempts` ran out; resolves with its last answer. */
export async function eventually(check: () => boolean, attempts = 100): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (check()) return true;
    await sleep(100);
  }
  return check();
}

/** A constant load through the twin's Service (the demo request shape) until stopped. */
export function backgroundLoad(twin: Twin, rps: number): { stop(): Promise<void> } {
  const controller = new AbortController();
  const done = runConstantArrivalLoad({
    urls: [twin.state.serviceUrl],
    model: twin.state.model,
    rps,
    durationS: 600,
    ...DEMO_SHAPE,
    signal: controller.signal,
  });
  return {
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}
