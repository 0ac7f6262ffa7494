import type { AlertEvaluatorRun, RecordedMessage, SlackDelivery, Twin } from '../../sim/harness/index.js';
import {
  type AlertCycleSummary,
  type AlertMessage,
  alertMessageSchema,
  type AlertName,
  type AlertSettings,
  type TargetEvaluation,
} from '../../shared/alerts/index.js';
import { evaluateTarget } from '../../shared/alerts/rules/index.js';
import type { MetricsSource } from '../../shared/metrics/index.js';
import type { Target } from '../../shared/config/index.js';
import { pollFor } from './poll.js';
import { sleep } from './twin.js';

/** One message on the alerts topic: as SNS recorded it, and its body checked against the v1 schema. */
export interface PublishedAlert {
  recorded: RecordedMessage;
  message: AlertMessage;
}

/** Every message on the twin's alerts topic so far, in arrival order (a body that is not a v1 message throws). */
export function publishedAlerts(twin: Twin): PublishedAlert[] {
  return twin.sns.messages(twin.state.aws.alertTopicArn).map((recorded) => ({
    recorded,
    message: alertMessageSchema.parse(JSON.parse(recorded.message)),
  }));
}

/** One scheduled run of the evaluator, as the background scheduler saw it. */
export interface ScheduledRun {
  startedAtMs: number;
  endedAtMs: number;
  summary: AlertCycleSummary | undefined;
  /** What the invocation threw (the handler throws when every target failed). */
  error: unknown;
}

/** The background scheduler: what EventBridge does every minute in production, here every `intervalMs`. */
export interface Scheduler {
  runs(): ScheduledRun[];
  /** Resolves once `count` more runs than now have ended. */
  waitForRuns(count: number): Promise<void>;
  /** Stops scheduling and waits for the run in progress. */
  stop(): Promise<void>;
}

/**
 * Invokes `run` every `intervalMs` (measured from each run's start; a slow run is followed at once by the next),
 * one invocation at a time, as an EventBridge schedule with one evaluator does.
 */
export function startScheduler(run: AlertEvaluatorRun, intervalMs = 1_000): Scheduler {
  const runs: ScheduledRun[] = [];
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      const startedAtMs = Date.now();
      let summary: AlertCycleSummary | undefined;
      let error: unknown;
      try {
        summary = await run(startedAtMs);
      } catch (caught) {
        error = caught;
      }
      runs.push({ startedAtMs, endedAtMs: Date.now(), summary, error });
      const waitMs = startedAtMs + intervalMs - Date.now();
      if (waitMs > 0 && !stopped)
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, waitMs);
        });
    }
  })();
  return {
    runs: () => [...runs],
    waitForRuns: async (count) => {
      const target = runs.length + count;
      await pollFor(`${count} more evaluator runs`, () => (runs.length >= target ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
    },
    stop: async () => {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}

/** A Slack message as the sink received it: its header ("🔴 FIRING: VLLMKVCacheFull") and when. */
export interface SlackAlertDelivery {
  header: string;
  receivedAtMs: number;
}

interface SlackBody {
  attachments?: Array<{ blocks?: Array<{ type?: string; text?: { text?: string } }> }>;
}

/** The Slack messages among `deliveries` about one alert instance (their context names its fingerprint). */
function aboutInstance(deliveries: readonly SlackDelivery[], fingerprint: string): SlackAlertDelivery[] {
  return deliveries
    .filter((delivery) => JSON.stringify(delivery.body).includes(`fingerprint ${fingerprint}`))
    .map((delivery) => {
      const blocks = (delivery.body as SlackBody).attachments?.[0]?.blocks ?? [];
      const header = blocks.find((block) => block.type === 'header')?.text?.text ?? '';
      return { header, receivedAtMs: delivery.receivedAtMs };
    });
}

/** What reached SNS and Slack since the watch began (an instance may have older incidents from earlier tests). */
export interface AlertWatch {
  /** Alert messages since the watch began, all or those of one instance (fingerprint), in arrival order. */
  published(fingerprint?: string): PublishedAlert[];
  /** Slack messages about one instance since the watch began, in arrival order. */
  slack(fingerprint: string): SlackAlertDelivery[];
}

/** Starts watching the alerts topic and the Slack sink from now on. */
export function watchAlerts(twin: Twin): AlertWatch {
  const messagesBefore = twin.sns.messages(twin.state.aws.alertTopicArn).length;
  const deliveriesBefore = twin.slack.deliveries().length;
  return {
    published: (fingerprint) =>
      publishedAlerts(twin)
        .slice(messagesBefore)
        .filter((alert) => fingerprint === undefined || alert.message.fingerprint === fingerprint),
    slack: (fingerprint) => aboutInstance(twin.slack.deliveries().slice(deliveriesBefore), fingerprint),
  };
}

/**
 * `settings` with every `for` and keep-firing time set to 0: evaluating with them shows a condition that holds now,
 * even if not yet for long, and only if it holds now.
 */
export function withoutFor(settings: AlertSettings): AlertSettings {
  const rules = Object.fromEntries(
    Object.entries(settings.rules).map(([name, rule]) => [name, { ...rule, forSeconds: 0, keepFiringForSeconds: 0 }]),
  ) as Record<AlertName, AlertSettings['rules'][AlertName]>;
  return { ...settings, rules };
}

export interface QuietOptions {
  twin: Twin;
  run: AlertEvaluatorRun;
  target: Target;
  settings: AlertSettings;
  source: MetricsSource;
}

/**
 * Runs the evaluator until the alerting is at rest: a run that finds nothing firing and sends nothing (every stored
 * alert resolved and notified), and no rule's condition holding at all (nothing about to fire). Each test starts
 * from there, so the tail of one fault (a rate window still high) cannot fire into the next test.
 */
export async function waitUntilQuiet({ twin, run, target, settings, source }: QuietOptions): Promise<void> {
  const atOnce = withoutFor(settings);
  await pollFor(
    'alerting at rest (nothing firing, pending or left to send)',
    async () => {
      const summary = await run();
      const now: TargetEvaluation = await evaluateTarget(target, atOnce, { source }, Date.now());
      const { firing, sent, failed, skipped } = summary.totals;
      const rest = firing + sent + failed + skipped === 0 && now.firing.length === 0 && now.failures.length === 0;
      if (!rest) await sleep(500);
      return rest ? true : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
  await twin.sns.flush();
}
