import { resolve } from 'node:path';
import type { Command } from 'commander';
import { scaledObject } from '../../shared/keda/index.js';
import { type CalibrationReport, renderSummaryText } from '../../shared/calibration/index.js';
import type { Twin } from '../../sim/harness/index.js';
import { harness } from '../harness.js';
import { positiveNumber } from '../options.js';
import { ruleByName } from '../../shared/alerts/rules/index.js';
import { formatPreflightReport, type PreflightReport } from '../../shared/preflight/index.js';
import { calibrateTwin } from './calibrate.js';

/** The demo's request shape: short completions keep the load cheap for a laptop. */
const DEMO_SHAPE = { promptTokens: 35, maxTokens: 32 } as const;

/**
 * KEDA's windows and periods, shortened so that a scale-out / scale-in cycle fits in a minute. The guide's are 30 s /
 * 2 Pods per 60 s up and 300 s / 1 Pod per 120 s down (what `vllm-pilot render scaledobject` prints by default).
 */
const DEMO_BEHAVIOR = {
  scaleUp: { stabilizationWindowSeconds: 0, pods: 1, periodSeconds: 5 },
  scaleDown: { stabilizationWindowSeconds: 10, pods: 1, periodSeconds: 5 },
} as const;
const DEMO_MAX_REPLICAS = 4;

/** The guide's plan (10 to 70 req/s), with holds and rests shortened from 60 s / 30 s. */
const DEMO_CALIBRATION = {
  plan: { rates: [10, 20, 30, 40, 50, 60, 70], holdSeconds: 8, restSeconds: 2 },
  warmup: { requests: 20 },
  request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
  scaledObject: { apply: true },
} as const;

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'the whole product on the local twin: calibrate through the workflow, apply the thresholds, watch KEDA scale, fire and resolve an alert into Slack, run the eleven preflight checks (about 4 minutes)',
    )
    .option('--profile <name|file>', 'twin profile', 'demo')
    .option('--out <dir>', 'where the calibration report and chart go', 'demo-output')
    .option('--load-seconds <seconds>', 'how long the scaling load runs', positiveNumber, 30)
    .option('--no-install', 'never install Prometheus or Alertmanager, even as root with apt-get')
    .action(async (opts: { profile: string; out: string; loadSeconds: number; install: boolean }) => {
      const { loadProfile, startTwin } = await harness();
      const profile = await loadProfile(opts.profile);
      const say = (line = '') => process.stdout.write(`${line}\n`);
      say(
        `1/6  Starting the twin "${profile.name}": an EKS cluster with ${profile.replicas} vLLM replicas, real Prometheus`,
      );
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      let twin: Twin | undefined;
      try {
        twin = await startTwin({
          profile,
          allowInstallPrometheus: opts.install,
          log: (line) => say(`     ${line}`),
          signal: stop.signal,
        });
        const lag = twin.prometheus.ingestion;
        say(
          lag
            ? `     AMP ingestion lag in this twin: ${lag.lagSeconds} s ± ${lag.jitterSeconds} s (samples reach queries that late, as on AWS)`
            : '     AMP ingestion lag in this twin: none (queries see a sample once it is scraped; on AWS up to about a minute)',
        );
        await runDemo(twin, resolve(opts.out), opts.loadSeconds, stop.signal, say);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        if (twin) {
          say('Stopping the twin...');
          await twin.stop();
        }
      }
    });
}

async function runDemo(
  twin: Twin,
  out: string,
  loadSeconds: number,
  signal: AbortSignal,
  say: (line?: string) => void,
): Promise<void> {
  const { measureCapacity, runConstantArrivalLoad } = await harness();
  const { state } = twin;
  const ref = { namespace: state.namespace, name: state.deployment };

  // 2. The guide's ScaledObject, as a platform team would have it before calibrating.
  const so = scaledObject({
    name: state.deployment,
    namespace: state.namespace,
    model: state.model,
    ampWorkspaceUrl: state.prometheusUrl,
    authentication: false,
    pollingInterval: 1,
    maxReplicaCount: DEMO_MAX_REPLICAS,
    behavior: DEMO_BEHAVIOR,
  });
  await twin.cluster.apply(so);
  say();
  say(
    `2/6  Applied the KEDA ScaledObject with the guide's thresholds (queue > 25 per Pod, p95 > 5 s as a whole), max ${DEMO_MAX_REPLICAS} replicas.`,
  );
  say(
    '     The demo shortens KEDA: polling 1 s; up 1 Pod / 5 s; down after 10 s, 1 Pod / 5 s (the guide: 30 s, 2/60 s; 300 s, 1/120 s).',
  );

  // 3. The calibration, through the same state machine that runs on AWS.
  say();
  say(
    '3/6  Calibrating a shadow copy of the Deployment (production and its KEDA untouched): deploy → warmup → readiness',
  );
  say('     → load steps 10, 20, ... 70 req/s (8 s each) → analysis → thresholds into the ScaledObject → copy removed');
  const report = await calibrateTwin(state, { input: { ...DEMO_CALIBRATION }, out, quiet: true });
  say(indent(renderSummaryText(report)));
  if (signal.aborted) return;

  // 4. KEDA with the calibrated thresholds: a load above what the replicas sustain, then quiet.
  const perReplica = measureCapacity(twin.profile, DEMO_SHAPE).capacityRps;
  const rps = Math.round(perReplica * 2.8);
  say();
  say(
    `4/6  Offering ${rps} req/s for ${loadSeconds} s (one replica sustains about ${Math.round(perReplica)}), then nothing:`,
  );
  const timeline = watchReplicas(twin, ref, say);
  const startMs = Date.now();
  try {
    await runConstantArrivalLoad({
      urls: [state.serviceUrl],
      model: state.model,
      rps,
      durationS: loadSeconds,
      ...DEMO_SHAPE,
      gracefulStopMs: 5_000,
      signal,
    });
    say(`     t=${elapsed(startMs)}  load stopped`);
    await waitFor(() => timeline.current() <= 1 || signal.aborted, 90_000);
  } finally {
    timeline.stop();
  }
  if (signal.aborted) return;

  // 5. An alert, end to end: a fault, the evaluator Lambda on a schedule, SNS, the Slack notifier Lambda, Slack.
  say();
  const alert = await demoAlert(twin, signal, say);
  if (signal.aborted) return;

  // 6. Preflight: after a calibration and a scale cycle, the eleven checks should all pass.
  say();
  const preflight = await demoPreflight(twin, say);
  say();
  summary(report, timeline.changes, alert, preflight, out, say);
}

/**
 * The preflight function on the twin, as the weekly schedule runs it: the eleven double-checks of the guide, which
 * the stages before prepared (ScaledObject, calibration record, scale cycle; the twin brings the rest).
 */
async function demoPreflight(twin: Twin, say: (line?: string) => void): Promise<PreflightReport | undefined> {
  const { twinPreflight } = await harness();
  say("6/6  Preflight: the guide's eleven production double-checks, run by the preflight Lambda:");
  const result = await twinPreflight(twin.state)();
  const [report] = result.reports;
  if (report !== undefined) say(indent(formatPreflightReport(report)));
  return report;
}

/** How often the demo runs the alert evaluator; on AWS it evaluates every 15 s (four cycles per one-minute invocation). */
const DEMO_EVALUATION_INTERVAL_MS = 5_000;
/**
 * How long the demo's alert keeps firing after its condition last held: 90 s by default (so that one failed 30 s
 * scrape neither resolves nor reopens it), shortened so the resolution shows within seconds of the clear.
 */
const DEMO_KEEP_FIRING_FOR_SECONDS = 10;

interface DemoAlertResult {
  alertname: string;
  forSeconds: number;
  firedAfterS: number | undefined;
  resolvedAfterS: number | undefined;
  slackMessages: number;
}

/**
 * KV-cache pressure on one Pod → VLLMKVCacheFull (the guide's 30 s `for`) → SNS → the Slack notifier → the twin's
 * Slack sink; then the fault is cleared and the resolution travels the same way.
 */
async function demoAlert(twin: Twin, signal: AbortSignal, say: (line?: string) => void): Promise<DemoAlertResult> {
  const { subscribeSlackNotifier, twinAlertEvaluator } = await harness();
  const rule = ruleByName('VLLMKVCacheFull');
  const forSeconds = rule.defaults.forSeconds;
  say(
    `5/6  Alerting: KV-cache pressure on one Pod; the alert evaluator runs every ${DEMO_EVALUATION_INTERVAL_MS / 1000} s (every 15 s on AWS); ${rule.name} needs ${forSeconds} s, and keeps firing ${DEMO_KEEP_FIRING_FOR_SECONDS} s after it clears (90 s by default):`,
  );
  const unsubscribe = subscribeSlackNotifier(twin.sns, twin.state);
  const evaluate = twinAlertEvaluator(twin.state, {
    alerts: { rules: { [rule.name]: { keepFiringFor: `${DEMO_KEEP_FIRING_FOR_SECONDS}s` } } },
  });
  const startMs = Date.now();
  const slackSeen = twin.slack.deliveries().length;
  // The twin logs the fault's description.
  twin.faults.inject({ kind: 'kv-cache-pressure' });
  const result: DemoAlertResult = {
    alertname: rule.name,
    forSeconds,
    firedAfterS: undefined,
    resolvedAfterS: undefined,
    slackMessages: 0,
  };
  let clearedAtMs: number | undefined;
  try {
    const deadline = startMs + (forSeconds + DEMO_KEEP_FIRING_FOR_SECONDS + 90) * 1000;
    while (!signal.aborted && Date.now() < deadline && result.resolvedAfterS === undefined) {
      await evaluate();
      await twin.sns.flush();
      for (const delivery of twin.slack.deliveries().slice(slackSeen + result.slackMessages)) {
        result.slackMessages += 1;
        say(`     t=${elapsed(startMs)}  Slack: ${slackHeadline(delivery.body)}`);
      }
      const statuses = alertStatuses(twin, rule.name, startMs);
      if (result.firedAfterS === undefined && statuses.includes('firing')) {
        result.firedAfterS = (Date.now() - startMs) / 1000;
        twin.faults.clear();
        clearedAtMs = Date.now();
        say(`     t=${elapsed(startMs)}  fault cleared`);
      } else if (clearedAtMs !== undefined && statuses.includes('resolved')) {
        result.resolvedAfterS = (Date.now() - clearedAtMs) / 1000;
        break;
      }
      await new Promise((r) => setTimeout(r, DEMO_EVALUATION_INTERVAL_MS));
    }
  } finally {
    twin.faults.clear();
    unsubscribe();
  }
  return result;
}

/** The statuses of the alert's SNS messages since `sinceMs`. */
function alertStatuses(twin: Twin, alertname: string, sinceMs: number): string[] {
  return twin.sns
    .messages(twin.state.aws.alertTopicArn)
    .filter((m) => m.receivedAtMs >= sinceMs && m.attributes.alertname?.value === alertname)
    .map((m) => m.attributes.status?.value ?? '');
}

/** The first line a person sees in Slack: the attachment's header and the summary. */
function slackHeadline(body: unknown): string {
  const blocks = (body as { attachments?: Array<{ blocks?: Array<{ type: string; text?: { text?: string } }> }> })
    .attachments?.[0]?.blocks;
  const header = blocks?.find((b) => b.type === 'header')?.text?.text ?? '';
  const section = blocks?.find((b) => b.type === 'section')?.text?.text ?? '';
  return `${header}  ${section.replace(/\*/g, '')}`.trim();
}

/** Follows the Deployment's replica count (what KEDA sets) and prints each change with KEDA's reason. */
function watchReplicas(twin: Twin, ref: { namespace: string; name: string }, say: (line?: string) => void) {
  const startMs = Date.now();
  const read = () => {
    const spec = twin.store.get('Deployment', ref.namespace, ref.name)?.spec as { replicas?: number } | undefined;
    return spec?.replicas ?? 0;
  };
  let current = read();
  const changes: Array<{ atS: number; from: number; to: number }> = [];
  say(`     t=0s  ${current} replica(s)`);
  const unwatch = twin.store.watch('Deployment', (event) => {
    const object = event.object;
    if (object.metadata.name !== ref.name || object.metadata.namespace !== ref.namespace) return;
    const next = (object.spec as { replicas?: number }).replicas ?? 0;
    if (next === current) return;
    changes.push({ atS: (Date.now() - startMs) / 1000, from: current, to: next });
    say(`     t=${elapsed(startMs)}  ${current} → ${next} replicas  (${lastRescaleReason(twin, ref) ?? 'KEDA'})`);
    current = next;
  });
  return { current: () => current, changes, stop: unwatch };
}

/**
 * The newest SuccessfulRescale Event of the Deployment's HPA, reduced to its figures: `queue 58 / 15 per Pod → 4,
 * p95 3.8 vs target 2 × 2 ready Pods → 4`. The triggers are s0 (queue depth, per Pod) and s1 (p95 latency, as a
 * whole), in the ScaledObject's order.
 */
function lastRescaleReason(twin: Twin, ref: { namespace: string; name: string }): string | undefined {
  const events = twin.store
    .list('Event', { namespace: ref.namespace })
    .filter((e) => (e as { reason?: string }).reason === 'SuccessfulRescale')
    .sort((a, b) => String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)));
  const message = (events.at(-1) as { message?: string } | undefined)?.message;
  if (!message) return undefined;
  const names = ['queue', 'p95'];
  const figures = [
    ...message.matchAll(/s(\d)-prometheus ([\d.]+ (?:\/ [\d.]+ per Pod|vs target [\d.]+ × \d+ ready Pods) → \d+)/g),
  ].map(([, index, figure]) => `${names[Number(index)] ?? `s${index}`} ${figure}`);
  return figures.length > 0 ? `KEDA: ${figures.join(', ')}` : undefined;
}

function summary(
  report: CalibrationReport,
  changes: ReadonlyArray<{ atS: number; from: number; to: number }>,
  alert: DemoAlertResult,
  preflight: PreflightReport | undefined,
  out: string,
  say: (line?: string) => void,
): void {
  const { analysis } = report;
  const t = analysis.thresholds;
  say('Summary');
  say(
    `  saturation point   ${analysis.saturation.found ? `${analysis.saturation.rateRps} req/s` : `not found within the plan (${analysis.saturation.reason})`}`,
  );
  say(
    `  capacity           ${analysis.capacityRps ? `${analysis.capacityRps.value.toFixed(1)} req/s per replica` : 'unknown'}`,
  );
  if (t) {
    say(`  thresholds         queue > ${t.queueDepthPerPod.value} per Pod, p95 > ${t.p95LatencySeconds.value} s`);
    say(
      `                     scale in: queue 0 and p95 < ${t.scaleIn.value.p95BelowSeconds} s for ${t.scaleIn.value.forSeconds} s`,
    );
  }
  say(`  ScaledObject       ${report.change?.applied ? 'patched with the new thresholds' : 'unchanged (dry run)'}`);
  const peak = Math.max(0, ...changes.map((c) => c.to));
  say(
    `  scaling            ${changes.length === 0 ? 'no change' : changes.map((c) => `${c.to} at ${Math.round(c.atS)} s`).join(', ')}${peak ? ` (peak ${peak})` : ''}`,
  );
  say(
    `  alert              ${alert.alertname}: ${alert.firedAfterS === undefined ? 'did not fire' : `fired ${Math.round(alert.firedAfterS)} s after the fault (for ${alert.forSeconds} s)`}, ${alert.resolvedAfterS === undefined ? 'not resolved' : `resolved ${Math.round(alert.resolvedAfterS)} s after it cleared`}; ${alert.slackMessages} Slack message(s)`,
  );
  if (preflight !== undefined) {
    const { pass, warn, fail } = preflight.counts;
    say(`  preflight          ${preflight.status}: ${pass} pass, ${warn} warn, ${fail} fail`);
  }
  say(`  report and chart   ${out}/report.json, ${out}/chart.svg`);
}

function indent(text: string, spaces = 5): string {
  return text
    .split('\n')
    .map((line) => `${' '.repeat(spaces)}${line}`)
    .join('\n');
}

function elapsed(startMs: number): string {
  return `${Math.round((Date.now() - startMs) / 1000)}s`;
}

async function waitFor(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
}
