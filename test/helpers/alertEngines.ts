import { parse as parseYaml } from 'yaml';
import type { Twin, TwinState } from '../../sim/harness/index.js';
import type { AlertName, AlertStatus } from '../../shared/alerts/index.js';
import { parseDurationSeconds } from '../../shared/alerts/rules/index.js';
import { ALERT_SCENARIOS, type AlertScenario } from '../../bench/alerts.js';
import { type AlertWatch, type PublishedAlert, type SlackAlertDelivery } from './alerts.js';
import { pollFor } from './poll.js';

/**
 * Both alerting engines watching the same faults on one twin: AMP's ruler and Alertmanager (installed by the product's
 * installer) and the Lambda evaluator publish to the same alerts topic, so each fault is one episode seen by both.
 */

export const ENGINES = ['amp', 'lambda'] as const;
export type Engine = (typeof ENGINES)[number];

/**
 * Which engine sent a message, from its fingerprint (message.ts): Alertmanager's label-set fingerprint is 16 hex
 * digits, the Lambda engine's alert-state key 32.
 */
export function engineOf(fingerprint: string): Engine {
  if (/^[0-9a-f]{16}$/.test(fingerprint)) return 'amp';
  if (/^[0-9a-f]{32}$/.test(fingerprint)) return 'lambda';
  throw new Error(`fingerprint ${fingerprint} is neither Alertmanager's (16 hex digits) nor the Lambda engine's (32)`);
}

/** The six alerts with the bench's faults (bench/alerts.ts): all but the absent-series alert. */
export const SIX_ALERT_SCENARIOS: readonly AlertScenario[] = ALERT_SCENARIOS.filter(
  (scenario) => scenario.alertname !== 'VLLMMetricsAbsent',
);

/** The labels that name the faulted instance in a message: its Pod, its GPU, or (latency is per model) the model. */
export function instanceLabels(state: TwinState, scenario: AlertScenario, pod: string): Record<string, string> {
  if (scenario.instance === 'pod') return { pod };
  if (scenario.instance === 'gpu') {
    const replica = state.replicas.find((r) => r.name === pod);
    if (replica === undefined) throw new Error(`pod ${pod} is not in the twin's state`);
    return { UUID: replica.gpuUuid };
  }
  return { namespace: state.namespace, model_name: state.model };
}

/** Alertmanager's route timers in an AMP alert manager definition (the YAML the installer uploads). */
export function alertmanagerRouteTimers(definition: string): { groupWaitMs: number; groupIntervalMs: number } {
  const outer = parseYaml(definition) as { alertmanager_config: string };
  const route = (parseYaml(outer.alertmanager_config) as { route: { group_wait: string; group_interval: string } })
    .route;
  const ms = (text: string) => {
    const seconds = parseDurationSeconds(text);
    if (seconds === undefined) throw new Error(`route timer ${text} is not a duration`);
    return seconds * 1000;
  };
  return { groupWaitMs: ms(route.group_wait), groupIntervalMs: ms(route.group_interval) };
}

/** One message of an episode, on SNS and in Slack. */
export interface EpisodeMessage {
  published: PublishedAlert;
  slack: SlackAlertDelivery[];
}

/** One fault, seen by both engines. */
export interface Episode {
  scenario: AlertScenario;
  pod: string;
  where: Record<string, string>;
  onsetMs: number;
  clearedAtMs: number;
  firing: Record<Engine, PublishedAlert>;
  /** Each engine's resolved message (AMP's comes at the next group_interval tick: minutes). */
  resolved: Record<Engine, Promise<PublishedAlert>>;
}

/** How long to wait for each engine's messages. */
export interface EpisodeTimeouts {
  firingMs: number;
  /** After the engine's firing message. */
  resolvedMs: Record<Engine, number>;
}

/** The first message of `engine` about `alertname` at `where` with `status`, received after `afterMs`. */
export function findMessage(
  watch: AlertWatch,
  engine: Engine,
  query: { alertname: AlertName; status: AlertStatus; where: Record<string, string>; afterMs: number },
): PublishedAlert | undefined {
  return watch
    .published()
    .find(
      ({ message, recorded }) =>
        recorded.receivedAtMs >= query.afterMs &&
        message.alertname === query.alertname &&
        message.status === query.status &&
        engineOf(message.fingerprint) === engine &&
        Object.entries(query.where).every(([name, value]) => message.labels[name] === value),
    );
}

/**
 * Injects the scenario's fault on `pod`, waits until both engines sent the firing message (and `beforeClear`, when
 * given, resolved), clears the fault, and returns without waiting for the resolved messages (their promises).
 */
export async function runEpisode(options: {
  twin: Twin;
  watch: AlertWatch;
  scenario: AlertScenario;
  pod: string;
  timeouts: EpisodeTimeouts;
  beforeClear?: (firing: Record<Engine, PublishedAlert>) => Promise<void>;
}): Promise<Episode> {
  const { twin, watch, scenario, pod, timeouts } = options;
  const where = instanceLabels(twin.state, scenario, pod);
  const { alertname } = scenario;
  const fault = twin.faults.inject({ ...scenario.fault, pod });
  const awaitMessage = (engine: Engine, status: AlertStatus, afterMs: number, timeoutMs: number) =>
    pollFor(
      `${engine}: ${alertname} ${status} at ${JSON.stringify(where)}`,
      () => findMessage(watch, engine, { alertname, status, where, afterMs }),
      { timeoutMs, intervalMs: 200 },
    );
  try {
    const [amp, lambda] = await Promise.all(
      ENGINES.map((engine) => awaitMessage(engine, 'firing', fault.onsetMs, timeouts.firingMs)),
    );
    const firing = { amp: amp as PublishedAlert, lambda: lambda as PublishedAlert };
    await options.beforeClear?.(firing);
    const clearedAtMs = Date.now();
    twin.faults.clear(pod);
    const resolved = Object.fromEntries(
      ENGINES.map((engine) => {
        const promise = awaitMessage(
          engine,
          'resolved',
          firing[engine].recorded.receivedAtMs,
          timeouts.resolvedMs[engine],
        );
        // Awaited by the caller; a rejection before then must not be reported as unhandled.
        promise.catch(() => undefined);
        return [engine, promise];
      }),
    ) as Record<Engine, Promise<PublishedAlert>>;
    return { scenario, pod, where, onsetMs: fault.onsetMs, clearedAtMs, firing, resolved };
  } finally {
    // A failed wait must not leave its fault to the next episode (clearing twice is harmless).
    twin.faults.clear(pod);
  }
}

/** An Alertmanager alert as its API v2 lists it (GET /api/v2/alerts). */
export interface AlertmanagerAlert {
  labels: Record<string, string>;
  fingerprint: string;
  status: { state: 'active' | 'suppressed' | 'unprocessed'; inhibitedBy: string[]; silencedBy: string[] };
}

/** The alerts of `alertname` whose labels include `where`, as the workspace's Alertmanager holds them. */
export async function alertmanagerAlerts(
  alertmanagerUrl: string,
  alertname: AlertName,
  where: Record<string, string>,
): Promise<AlertmanagerAlert[]> {
  const url = new URL('/api/v2/alerts', alertmanagerUrl);
  url.searchParams.append('filter', `alertname="${alertname}"`);
  for (const [name, value] of Object.entries(where)) url.searchParams.append('filter', `${name}="${value}"`);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`Alertmanager answered ${response.status} to ${url.href}`);
  return (await response.json()) as AlertmanagerAlert[];
}
