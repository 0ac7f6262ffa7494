import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { AlertSettingsInput } from '../shared/alerts/rules/index.js';
import { type Twin, twinAlertEvaluator, twinMetricsSource } from '../sim/harness/index.js';
import { type PublishedAlert, startScheduler, watchAlerts } from './helpers/alerts.js';
import { pollFor } from './helpers/poll.js';
import { sleep, startDemoTwin } from './helpers/twin.js';

// A gap in the data while an alert fires, on the twin with real parts: the twin's scrape-gap fault makes one Pod's
// /metrics answer 503, so the real Prometheus marks the Pod's series stale (as AMP's collector does after a failed
// scrape), and the REAL alert-evaluator Lambda finds nothing for that Pod until the scrapes succeed again.
//
// Without a keep-firing time the gap resolves the critical alert and opens it again a `for` later: a false
// "resolved" and a second page. With one, the alert fires once and resolves once, after the fault is really gone.
// Timings are shortened as in the other alert tests (1 s scrapes and evaluations): `for` 4 s, a 3 s gap, and a
// keep-firing time of 20 s, longer than the gap plus the `for` the evaluator must see refilled after it (the
// product's 90 s against a 30 s scrape and a 30 s `for`).

jest.setTimeout(180_000);

const FOR_S = 4;
const GAP_S = 3;
const KEEP_S = 20;

const settings = (keepFiringFor: string) =>
  ({ rules: { VLLMKVCacheFull: { for: `${FOR_S}s`, keepFiringFor } } }) satisfies AlertSettingsInput;

let twin: Twin;

beforeAll(async () => {
  twin = await startDemoTwin();
}, 120_000);

afterAll(async () => {
  await twin?.stop();
});

/** The VLLMKVCacheFull messages about `pod`, in order. */
const about = (alerts: PublishedAlert[], pod: string) =>
  alerts.filter((p) => p.message.alertname === 'VLLMKVCacheFull' && p.message.labels.pod === pod);

/** Status/reason of each VLLMKVCacheFull message about `pod`, in order. */
const story = (alerts: PublishedAlert[], pod: string) =>
  about(alerts, pod).map((p) => `${p.message.status}/${p.message.reason}`);

/**
 * What a failure needs to name its cause: each message with its second since the pressure began, and the seconds at
 * which the Pod's scrapes failed (`up` 0 or no sample), beyond the injected gap when the machine is loaded.
 */
async function diagnose(alerts: PublishedAlert[], pod: string, startMs: number) {
  const endMs = Date.now();
  const seconds = (ms: number) => Math.round((ms - startMs) / 100) / 10;
  const up = await twinMetricsSource(twin.state).range(`up{pod="${pod}"}`, { startMs, endMs, stepSeconds: 1 });
  const seen = new Map((up[0]?.points ?? []).map((p) => [Math.round(p.timestampMs / 1000), p.value]));
  const failedScrapeSeconds: number[] = [];
  for (let t = Math.ceil(startMs / 1000); t <= Math.floor(endMs / 1000); t += 1)
    if (seen.get(t) !== 1) failedScrapeSeconds.push(t - Math.ceil(startMs / 1000));
  const messages = about(alerts, pod).map(
    (p) => `${seconds(p.recorded.receivedAtMs)} s ${p.message.status}/${p.message.reason}`,
  );
  return { messages, failedScrapeSeconds };
}

/**
 * On `pod`: KV-cache pressure until the alert fires, then a scrape gap of GAP_S, then KEEP_S + FOR_S more seconds of
 * pressure (long enough for a kept alert to be resolved by mistake), then the fault cleared until the alert resolves.
 * Returns the messages about the Pod, and whether its series were really gone during the gap.
 */
async function gapWhileFiring(pod: string, keepFiringFor: string) {
  const watch = watchAlerts(twin);
  const scheduler = startScheduler(twinAlertEvaluator(twin.state, { alerts: settings(keepFiringFor) }));
  const source = twinMetricsSource(twin.state);
  const mine = () => story(watch.published(), pod);
  const startMs = Date.now();
  try {
    twin.faults.inject({ kind: 'kv-cache-pressure', pod });
    await pollFor(`VLLMKVCacheFull firing on ${pod}`, () => (mine().length > 0 ? true : undefined), {
      timeoutMs: 60_000,
    });
    twin.faults.inject({ kind: 'scrape-gap', pod, seconds: GAP_S });
    const seriesGone = await pollFor(
      `${pod}'s series stale`,
      async () => ((await source.instant(`vllm:num_requests_running{pod="${pod}"}`)).length === 0 ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    await sleep((GAP_S + FOR_S + KEEP_S) * 1_000);
    const beforeClear = mine();
    twin.faults.clear(pod);
    await pollFor(
      `VLLMKVCacheFull resolved on ${pod}`,
      () => (mine().at(-1)?.startsWith('resolved') ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    await scheduler.waitForRuns(3);
    const failedRuns = scheduler.runs().filter((r) => r.error !== undefined);
    return { seriesGone, beforeClear, all: mine(), failedRuns, why: await diagnose(watch.published(), pod, startMs) };
  } finally {
    twin.faults.clear(pod);
    await scheduler.stop();
  }
}

describe('Alerts: a failed scrape while an alert fires, on the twin', () => {
  it('without a keep-firing time, the gap sends a false resolved and a second first notification', async () => {
    // Prepare
    const pod = twin.state.replicas.map((r) => r.name).sort()[1] ?? '';

    // Act
    const run = await gapWhileFiring(pod, '0s');

    // Assess: the hazard is real on the twin (so the next test shows something): the Pod's series vanished, and the
    // alert resolved and fired again while the KV cache stayed full.
    expect(run.seriesGone).toBe(true);
    expect({ story: run.beforeClear.slice(0, 3), why: run.why }).toMatchObject({
      story: ['firing/first', 'resolved/resolved', 'firing/first'],
    });
    expect(run.failedRuns).toEqual([]);
  });

  it(`with a keep-firing time of ${KEEP_S} s, the alert fires once and resolves once, after the fault is cleared`, async () => {
    // Prepare
    const pod = twin.state.replicas.map((r) => r.name).sort()[0] ?? '';

    // Act
    const run = await gapWhileFiring(pod, `${KEEP_S}s`);

    // Assess
    expect(run.seriesGone).toBe(true);
    // With the timeline and the failed scrapes beside them, a failure says whether the machine's load broke scrapes
    // beyond the injected gap.
    expect({ beforeClear: run.beforeClear, all: run.all, why: run.why }).toMatchObject({
      beforeClear: ['firing/first'],
      all: ['firing/first', 'resolved/resolved'],
    });
    expect(run.failedRuns).toEqual([]);
  });
});
