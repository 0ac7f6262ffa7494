import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../clock/index.js';
import { KubeForbiddenError, type ClusterClient, type PodProxyRef } from '../../kube/index.js';
import { T0_MS, testInput } from '../testing/steps.js';
import { lookAtK6 } from './k6Live.js';
import type { WatchState } from './state.js';

/** A cluster whose only answer is the k6 Pod's proxy: `answer` for every GET (or thrown, when an Error). */
function cluster(answer: string | Error, asked: PodProxyRef[] = []): ClusterClient {
  return {
    proxyGet: (ref: PodProxyRef) => {
      asked.push(ref);
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  } as unknown as ClusterClient;
}

const metrics = (vus: number, iterations: number) =>
  JSON.stringify({
    data: [
      {
        type: 'metrics',
        id: 'vus',
        attributes: { type: 'gauge', contains: 'default', tainted: null, sample: { value: vus } },
      },
      {
        type: 'metrics',
        id: 'iterations',
        attributes: { type: 'counter', contains: 'default', tainted: null, sample: { count: iterations, rate: 1 } },
      },
    ],
  });

function previous(job: string, readings: WatchState['k6Readings']): WatchState {
  return {
    status: 'continue',
    job,
    reason: 'earlier look',
    waitSeconds: 3,
    loadStartMs: T0_MS,
    ending: null,
    windowEndMs: null,
    k6Readings: readings,
  };
}

const base = {
  namespace: 'default',
  job: 'load-50',
  pod: 'load-50-abcde',
  loadStartMs: T0_MS,
  offeredRps: 50,
  plannedHoldSeconds: 60,
  settings: testInput().plan.earlyStop,
};
const earlier = [1, 2, 3, 4].map((i) => ({
  tMs: T0_MS + i * 5_000,
  vus: 60 * i,
  iterations: 100 * i,
  droppedIterations: 0,
  httpReqs: 100 * i,
}));

describe('Function: lookAtK6', () => {
  it("reads k6's /v1/metrics through the Pod proxy, appends the reading to the step's, and decides", async () => {
    // Prepare
    const asked: PodProxyRef[] = [];
    const clock = new VirtualClock(T0_MS + 25_000);

    // Act
    const look = await lookAtK6({
      ...base,
      cluster: cluster(metrics(300, 500), asked),
      clock,
      previous: previous('load-50', earlier),
    });

    // Assess
    expect(asked).toEqual([{ namespace: 'default', pod: 'load-50-abcde', port: 6565, path: '/v1/metrics' }]);
    expect(look.readings).toHaveLength(5);
    expect(look.readings.at(-1)).toEqual({
      tMs: T0_MS + 25_000,
      vus: 300,
      iterations: 500,
      droppedIterations: 0,
      httpReqs: 0,
    });
    expect(look.decision).toMatchObject({ action: 'end', kind: 'saturated' });
    expect(look.note).toMatch(/^k6: requests in flight rose from 60 to 300 over 20 s/);
  });

  it("does not carry readings of another Job's look", async () => {
    // Act
    const look = await lookAtK6({
      ...base,
      cluster: cluster(metrics(10, 5)),
      clock: new VirtualClock(T0_MS + 25_000),
      previous: previous('load-40', earlier),
    });

    // Assess
    expect(look.readings).toHaveLength(1);
    expect(look.decision.action).toBe('continue');
  });

  it.each([
    {
      case: 'RBAC refuses pods/proxy',
      answer: new KubeForbiddenError('pods default/load-50-abcde', { status: 403, verb: 'proxy to' }),
      reason: /KubeForbiddenError: proxy to pods default\/load-50-abcde: forbidden \(HTTP 403\)/,
    },
    { case: 'k6 answers something else', answer: '<html>', reason: /K6MetricsInvalidError: k6 \/v1\/metrics: body/ },
  ])('falls back to AMP when $case: continue, saying why, readings kept', async ({ answer, reason }) => {
    // Act
    const look = await lookAtK6({
      ...base,
      cluster: cluster(answer),
      clock: new VirtualClock(T0_MS + 25_000),
      previous: previous('load-50', earlier),
    });

    // Assess
    expect(look.decision.action).toBe('continue');
    expect(look.note).toMatch(reason);
    expect(look.note).toMatch(/AMP decides alone$/);
    expect(look.readings).toEqual(earlier);
  });
});
