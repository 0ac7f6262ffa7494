import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AmpClient } from '@aws-sdk/client-amp';
import {
  type AlertInstallerResult,
  alertInstallerEnvironment,
  runConstantArrivalLoad,
  subscribeSlackNotifier,
  TWIN_CREDENTIALS,
  TWIN_RESOURCES,
  type Twin,
  twinAlertEvaluator,
  twinAlertInstaller,
  twinMetricsSource,
  twinTarget,
} from '../sim/harness/index.js';
import { ALERT_NAMES } from '../shared/alerts/index.js';
import { ClientAmpControlPlane, desiredAmpAlerting, type DesiredAmpAlerting } from '../shared/alerts/amp/index.js';
import { evaluateTarget, parseAlertSettings, parseAlertTargets } from '../shared/alerts/rules/index.js';
import { benchAlertSettings, LATENCY_LOAD_RPS } from '../bench/alerts.js';
import { type PublishedAlert, type Scheduler, startScheduler, type AlertWatch, watchAlerts } from './helpers/alerts.js';
import {
  type AlertmanagerAlert,
  alertmanagerAlerts,
  alertmanagerRouteTimers,
  type Engine,
  ENGINES,
  engineOf,
  type Episode,
  type EpisodeTimeouts,
  runEpisode,
  SIX_ALERT_SCENARIOS,
} from './helpers/alertEngines.js';
import { pollFor } from './helpers/poll.js';
import { DEMO_SHAPE, sleep, startDemoTwin, warmUp } from './helpers/twin.js';

// Issue 16's "must show", on the twin with `alerting.engine: amp`: the twin's Prometheus starts without the product's
// rules (as an empty AMP workspace), the REAL alert-installer Lambda puts the rule groups namespace and the
// Alertmanager definition into the twin's AMP through @aws-sdk/client-amp, and then each of the six alerts, tripped by
// its twin fault, fires once after its `for` and resolves once through the twin's Prometheus (AMP's ruler), Debian's
// Alertmanager, the twin's SNS and the REAL slack-notifier Lambda into the Slack sink. The REAL alert-evaluator Lambda
// watches the same faults at the same time (the Lambda engine, every second as the other alert tests run it) and
// publishes to the same topic: its notifications must be the same ones. The two engines' messages are told apart by
// their fingerprints (Alertmanager's 16 hex digits, the Lambda engine's 32).
//
// The `for`s and rate windows are the bench's quick ones (the guide's / 10); thresholds are the guide's. Alertmanager's
// group timers are the product's own (group_wait 30 s, group_interval 5 min: the installer takes no setting for them),
// so AMP's first notification comes group_wait after the alert fired and its resolution at the next group_interval
// tick, five minutes after the first notification. So the faults overlap: the latency one first, alone, under a light
// load through the Service (whose requests would reach the other faulted Pods), then the other five at once on five
// Pods, and the whole run waits for that tick about once.

const ALERT_SETTINGS = benchAlertSettings('quick');
const SETTINGS = parseAlertSettings(ALERT_SETTINGS.input);
/** One Pod per concurrent fault (bench/alerts.ts: ALERT_BENCH_REPLICAS.faults). */
const REPLICAS = SIX_ALERT_SCENARIOS.filter((s) => s.phase === 'concurrent').length;
/** Healthy requests in the latency window before the slow-decoding fault. */
const LATENCY_BASELINE_MS = 10_000;
/** After the last resolved message: longer than the twin Prometheus's resend delay (15 s), so a late duplicate shows. */
const QUIET_AFTER_MS = 20_000;

jest.setTimeout(60_000);

let twin: Twin;
let desired: DesiredAmpAlerting;
let rulesBeforeInstall: unknown;
let installed: AlertInstallerResult;
let installedAgain: AlertInstallerResult;
let client: AmpClient | undefined;
const unsubscribe: Array<() => void> = [];

/** The twin's Prometheus rule groups: their names and their rules' names (GET /api/v1/rules). */
async function prometheusRuleGroups(): Promise<Array<{ name: string; rules: string[] }>> {
  const response = await fetch(new URL('/api/v1/rules', twin.state.prometheusUrl));
  const body = (await response.json()) as { data: { groups: Array<{ name: string; rules: Array<{ name: string }> }> } };
  return body.data.groups.map((group) => ({ name: group.name, rules: group.rules.map((rule) => rule.name) }));
}

beforeAll(async () => {
  twin = await startDemoTwin({ replicas: REPLICAS }, undefined, { alerting: { engine: 'amp' } });
  unsubscribe.push(subscribeSlackNotifier(twin.sns, twin.state));
  // What the installer should put there, from its own environment (TARGETS with the alert settings, namespace, topic).
  const env = alertInstallerEnvironment(twin.state, ALERT_SETTINGS.input);
  desired = desiredAmpAlerting({
    targets: parseAlertTargets(env.TARGETS),
    namespace: TWIN_RESOURCES.ampRuleNamespace,
    topicArn: twin.state.aws.alertTopicArn,
    topicRegion: twin.state.region,
  });
  rulesBeforeInstall = await prometheusRuleGroups();
  const install = twinAlertInstaller(twin.state, { alerts: ALERT_SETTINGS.input });
  installed = await install();
  installedAgain = await install();
  await warmUp(twin);
}, 180_000);

afterAll(async () => {
  for (const stop of unsubscribe.splice(0)) stop();
  client?.destroy();
  await twin?.stop();
});

describe('Function: alert-installer handler on a twin with alerting.engine amp', () => {
  it('puts the rule groups namespace and the Alertmanager definition into an empty workspace through client-amp: ACTIVE and equal to the generated ones', async () => {
    // Prepare
    client = new AmpClient({
      region: twin.state.region,
      endpoint: twin.state.aws.ampControlPlaneEndpoint,
      credentials: TWIN_CREDENTIALS,
      maxAttempts: 1,
    });
    const controlPlane = new ClientAmpControlPlane({ client, workspaceId: twin.state.aws.ampWorkspaceId ?? '' });

    // Act
    const namespace = await controlPlane.describe(desired.ruleGroupsNamespace.resource);
    const definition = await controlPlane.describe(desired.alertManagerDefinition.resource);
    const groups = await prometheusRuleGroups();

    // Assess: nothing before the installer (the twin preloads no rules with the AMP engine), then the installer's.
    expect(rulesBeforeInstall).toEqual([]);
    expect(installed).toMatchObject({ trigger: 'schedule', installed: { workspaceId: twin.state.aws.ampWorkspaceId } });
    expect(installed.installed?.resources.map((r) => `${r.resource}: ${r.action}`)).toEqual([
      `rule groups namespace ${TWIN_RESOURCES.ampRuleNamespace}: created`,
      'Alertmanager definition: created',
    ]);
    expect(installedAgain.installed?.resources.map((r) => `${r.resource}: ${r.action}`)).toEqual([
      `rule groups namespace ${TWIN_RESOURCES.ampRuleNamespace}: unchanged`,
      'Alertmanager definition: unchanged',
    ]);
    expect(namespace).toEqual({ data: desired.ruleGroupsNamespace.data, status: { code: 'ACTIVE' } });
    expect(definition).toEqual({ data: desired.alertManagerDefinition.data, status: { code: 'ACTIVE' } });
    // AMP's ruler (the twin's Prometheus) evaluates the target's group, every rule of the registry, and nothing else.
    expect(groups).toEqual([{ name: `vllm-eks-pilot-alerts-${twinTarget(twin.state).name}`, rules: [...ALERT_NAMES] }]);
    expect(twin.amp.alertmanagerUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});

/** What one engine told about one episode: its messages with their Slack deliveries, and its times. */
interface EngineOutcome {
  messages: PublishedAlert[];
  onsetToFiringMs: number;
  onsetToSlackMs: number | undefined;
  clearToResolvedMs: number;
  clearToSlackMs: number | undefined;
}

/** Per alert and engine, in seconds: onset → SNS and → Slack, clear → resolved on SNS and → Slack. */
function timingTable(episodes: readonly Episode[], outcomes: ReadonlyMap<Episode, Record<Engine, EngineOutcome>>) {
  const seconds = (ms: number | undefined) => (ms === undefined ? '-' : (ms / 1000).toFixed(1));
  const cells = (x: EngineOutcome) =>
    `${seconds(x.onsetToFiringMs)} ${seconds(x.onsetToSlackMs)}  ${seconds(x.clearToResolvedMs)} ${seconds(x.clearToSlackMs)}`;
  return [
    'alert                  for   | AMP: onset→SNS →Slack  clear→resolved →Slack | Lambda: the same',
    ...episodes.map((episode) => {
      const outcome = outcomes.get(episode) as Record<Engine, EngineOutcome>;
      const forSeconds = String(SETTINGS.rules[episode.scenario.alertname].forSeconds).padStart(3);
      return `${episode.scenario.alertname.padEnd(22)} ${forSeconds} s | AMP: ${cells(outcome.amp)} | Lambda: ${cells(outcome.lambda)}`;
    }),
  ].join('\n');
}

describe('The six alerts with alerting.engine amp, the Lambda engine watching the same faults', () => {
  const episodes: Episode[] = [];
  const outcomes = new Map<Episode, Record<Engine, EngineOutcome>>();
  /** The Lambda engine's view of VLLMKVCacheHigh on the full Pod (firing, so inhibition is what kept it quiet). */
  let lambdaHighOnFullPod: string[] = [];
  /** Alertmanager's view of VLLMKVCacheHigh on the full Pod, and the fingerprint of the AMP VLLMKVCacheFull. */
  let ampHighOnFullPod: Array<AlertmanagerAlert['status']> = [];
  let ampFullFingerprint = '';
  let watch: AlertWatch;
  let scheduler: Scheduler | undefined;
  let groupWaitMs = 0;

  /** Waits until both engines have VLLMKVCacheHigh firing on the full Pod, and records how each holds it back. */
  async function seeKvCacheHighHeldBack(pod: string, fullFingerprint: string): Promise<void> {
    ampFullFingerprint = fullFingerprint;
    const url = twin.amp.alertmanagerUrl() ?? '';
    ampHighOnFullPod = await pollFor(
      'VLLMKVCacheHigh on the full Pod in Alertmanager',
      async () => {
        const alerts = await alertmanagerAlerts(url, 'VLLMKVCacheHigh', { pod });
        return alerts.length > 0 ? alerts.map((a) => a.status) : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const target = twinTarget(twin.state);
    const source = twinMetricsSource(twin.state);
    lambdaHighOnFullPod = await pollFor(
      'VLLMKVCacheHigh on the full Pod in the Lambda engine',
      async () => {
        const evaluation = await evaluateTarget(target, SETTINGS, { source }, Date.now());
        const high = evaluation.firing.filter((a) => a.alertname === 'VLLMKVCacheHigh' && a.labels.pod === pod);
        return high.length > 0 ? high.map((a) => a.alertname) : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  }

  beforeAll(async () => {
    if (installed.installed === undefined) throw new Error('the installer did not install: nothing to test');
    const timers = alertmanagerRouteTimers(desired.alertManagerDefinition.data);
    groupWaitMs = timers.groupWaitMs;
    const { groupIntervalMs } = timers;
    const longestMs = Math.max(
      ...SIX_ALERT_SCENARIOS.map(({ alertname }) => {
        const rule = SETTINGS.rules[alertname];
        return (rule.forSeconds + rule.windowSeconds) * 1000;
      }),
    );
    const timeouts: EpisodeTimeouts = {
      firingMs: longestMs + groupWaitMs + 60_000,
      resolvedMs: { amp: groupIntervalMs + 60_000, lambda: longestMs + 60_000 },
    };
    const pods = twin.state.replicas.map((r) => r.name).sort();
    watch = watchAlerts(twin);
    scheduler = startScheduler(twinAlertEvaluator(twin.state, { alerts: ALERT_SETTINGS.input }));
    try {
      // The latency fault alone, under a light load through the Service; the load runs until the condition is gone
      // (the Lambda engine's resolution), so the alert resolves for the right reason, not for want of requests.
      const latency = SIX_ALERT_SCENARIOS.filter((s) => s.phase === 'alone');
      const controller = new AbortController();
      const load = runConstantArrivalLoad({
        urls: [twin.state.serviceUrl],
        model: twin.state.model,
        rps: LATENCY_LOAD_RPS,
        durationS: 3600,
        ...DEMO_SHAPE,
        signal: controller.signal,
      });
      try {
        await sleep(LATENCY_BASELINE_MS);
        for (const scenario of latency) {
          const episode = await runEpisode({ twin, watch, scenario, pod: pods[0] as string, timeouts });
          episodes.push(episode);
          await episode.resolved.lambda;
        }
      } finally {
        controller.abort();
        await load;
      }

      // The other five at once, one Pod each. At 97 % the KV cache also holds VLLMKVCacheHigh's condition on its Pod:
      // before clearing, wait until both engines have it firing, so that its silence is the inhibition's doing.
      const concurrent = SIX_ALERT_SCENARIOS.filter((s) => s.phase === 'concurrent');
      episodes.push(
        ...(await Promise.all(
          concurrent.map((scenario, i) =>
            runEpisode({
              twin,
              watch,
              scenario,
              pod: pods[i] as string,
              timeouts,
              ...(scenario.alertname === 'VLLMKVCacheFull'
                ? { beforeClear: (firing) => seeKvCacheHighHeldBack(pods[i] as string, firing.amp.message.fingerprint) }
                : {}),
            }),
          ),
        )),
      );
      await Promise.all(episodes.flatMap((episode) => ENGINES.map((engine) => episode.resolved[engine])));
      await sleep(QUIET_AFTER_MS);
    } finally {
      await scheduler.stop();
    }
    await twin.sns.flush();
    // Every message on the topic in Slack (the notifier is a subscription: it may still be posting).
    await pollFor(
      'a Slack message for every alert message',
      () => (watch.published().every(({ message }) => watch.slack(message.fingerprint).length > 0) ? true : undefined),
      { timeoutMs: 30_000 },
    );
    for (const episode of episodes) {
      const outcome = {} as Record<Engine, EngineOutcome>;
      for (const engine of ENGINES) {
        const firing = episode.firing[engine];
        const resolved = await episode.resolved[engine];
        const slack = watch.slack(firing.message.fingerprint);
        const slackAt = (header: string) => slack.find((d) => d.header.includes(header))?.receivedAtMs;
        const firingSlackMs = slackAt('FIRING');
        const resolvedSlackMs = slackAt('RESOLVED');
        outcome[engine] = {
          messages: watch.published(firing.message.fingerprint),
          onsetToFiringMs: firing.recorded.receivedAtMs - episode.onsetMs,
          onsetToSlackMs: firingSlackMs === undefined ? undefined : firingSlackMs - episode.onsetMs,
          clearToResolvedMs: resolved.recorded.receivedAtMs - episode.clearedAtMs,
          clearToSlackMs: resolvedSlackMs === undefined ? undefined : resolvedSlackMs - episode.clearedAtMs,
        };
      }
      outcomes.set(episode, outcome);
    }
    console.log(timingTable(episodes, outcomes));
  }, 900_000);

  afterAll(async () => {
    await scheduler?.stop();
    twin?.faults.clear();
  });

  it.each(SIX_ALERT_SCENARIOS.map((scenario) => ({ alertname: scenario.alertname, fault: scenario.fault.kind })))(
    '$alertname ($fault): AMP fires once after its `for` and resolves once, through Alertmanager, SNS and the notifier into Slack',
    ({ alertname }) => {
      // Prepare
      const episode = episodes.find((e) => e.scenario.alertname === alertname);
      if (episode === undefined) throw new Error(`no episode of ${alertname}`);
      const amp = (outcomes.get(episode) as Record<Engine, EngineOutcome>).amp;
      const fingerprint = episode.firing.amp.message.fingerprint;

      // Assess
      expect(amp.messages.map(({ message }) => `${message.status}/${message.reason}`)).toEqual([
        'firing/first',
        'resolved/resolved',
      ]);
      expect(amp.messages[0]?.message).toMatchObject({ alertname, target: twinTarget(twin.state).name, endsAt: null });
      expect(amp.messages[0]?.message.labels).toMatchObject(episode.where);
      // After its `for`, and after Alertmanager's group_wait: the first notification of a new group waits that long.
      expect(amp.onsetToFiringMs).toBeGreaterThanOrEqual(SETTINGS.rules[alertname].forSeconds * 1000 + groupWaitMs);
      expect(watch.slack(fingerprint).map((d) => d.header)).toEqual([
        expect.stringContaining(`FIRING: ${alertname}`),
        expect.stringContaining(`RESOLVED: ${alertname}`),
      ]);
    },
  );

  it('sends nothing else with AMP: VLLMKVCacheHigh fires on the full Pod too, and Alertmanager inhibits it', () => {
    // Prepare
    const fullPod = episodes.find((e) => e.scenario.alertname === 'VLLMKVCacheFull')?.pod;
    const amp = watch.published().filter(({ message }) => engineOf(message.fingerprint) === 'amp');
    const expected = episodes.map((e) => e.firing.amp.message.fingerprint);

    // Assess
    expect(ampHighOnFullPod).toEqual([{ state: 'suppressed', inhibitedBy: [ampFullFingerprint], silencedBy: [] }]);
    expect(amp.filter(({ message }) => message.labels.pod === fullPod).map(({ message }) => message.alertname)).toEqual(
      ['VLLMKVCacheFull', 'VLLMKVCacheFull'],
    );
    expect([...new Set(amp.map(({ message }) => message.fingerprint))].sort()).toEqual(expected.sort());
  });

  it('with the Lambda engine: the same notifications (alert, status, target, instance, subject, attributes, Slack header), the same inhibition', () => {
    // Prepare
    const describeMessages = (engine: Engine) =>
      episodes.map((episode) => ({
        alertname: episode.scenario.alertname,
        messages: watch.published(episode.firing[engine].message.fingerprint).map(({ message, recorded }) => ({
          status: message.status,
          reason: message.reason,
          target: message.target,
          where: Object.fromEntries(Object.keys(episode.where).map((name) => [name, message.labels[name]])),
          subject: recorded.subject,
          attributes: recorded.attributes,
        })),
        slack: watch.slack(episode.firing[engine].message.fingerprint).map((d) => d.header),
      }));
    const lambda = watch.published().filter(({ message }) => engineOf(message.fingerprint) === 'lambda');

    // Assess
    expect(describeMessages('lambda')).toEqual(describeMessages('amp'));
    expect(lambdaHighOnFullPod).toEqual(['VLLMKVCacheHigh']);
    expect([...new Set(lambda.map(({ message }) => message.fingerprint))].sort()).toEqual(
      episodes.map((e) => e.firing.lambda.message.fingerprint).sort(),
    );
    for (const episode of episodes)
      expect(outcomes.get(episode)?.lambda.onsetToFiringMs).toBeGreaterThanOrEqual(
        SETTINGS.rules[episode.scenario.alertname].forSeconds * 1000,
      );
    expect(scheduler?.runs().filter((r) => r.error !== undefined)).toEqual([]);
  });
});
