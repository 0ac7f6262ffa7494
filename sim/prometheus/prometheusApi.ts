import { PrometheusConfigError, PrometheusError, PrometheusTargetsDownError, type TargetState } from './errors.js';
import { SCRAPE_JOB_NAMES, type ScrapeJobName, type TargetGroup } from './scrapeConfig.js';

/** The few HTTP calls the manager makes to its own Prometheus processes (targets, reload). */

export interface WaitForTargetsOptions {
  timeoutMs: number;
  /** Default 250 ms. */
  pollIntervalMs?: number;
}

interface ApiTarget {
  discoveredLabels?: Record<string, string>;
  scrapePool?: string;
  health?: string;
  lastError?: string;
}

/**
 * Polls `/api/v1/targets` of the Prometheus that scrapes (a server, or an agent: agent mode serves the targets API
 * too) until every target of `groups` is discovered and `up`; else throws PrometheusTargetsDownError.
 */
export async function waitForTargets(
  url: string,
  groups: Record<ScrapeJobName, TargetGroup[]>,
  options: WaitForTargetsOptions,
): Promise<TargetState[]> {
  const { timeoutMs, pollIntervalMs = 250 } = options;
  if (!(timeoutMs >= 0)) throw new PrometheusConfigError('timeoutMs', timeoutMs, 'must be a number of ms >= 0');
  const expected = SCRAPE_JOB_NAMES.flatMap((job) =>
    [...new Set(groups[job].flatMap((group) => group.targets))].map((address) => ({ job, address })),
  );
  const startedAt = performance.now();
  let apiProblem = '';
  for (;;) {
    let active: ApiTarget[] = [];
    try {
      const response = await fetch(`${url}/api/v1/targets?state=active`, { signal: AbortSignal.timeout(5_000) });
      const body = (await response.json()) as { data?: { activeTargets?: ApiTarget[] } };
      active = body.data?.activeTargets ?? [];
      apiProblem = response.ok ? '' : `targets API answered HTTP ${response.status}`;
    } catch (error) {
      apiProblem = `targets API unreachable: ${error instanceof Error ? error.message : String(error)}`;
    }
    const states: TargetState[] = expected.map(({ job, address }) => {
      const target = active.find((t) => t.scrapePool === job && t.discoveredLabels?.__address__ === address);
      if (!target) return { job, address, health: 'missing', lastError: apiProblem };
      const health = target.health === 'up' || target.health === 'down' ? target.health : 'unknown';
      return { job, address, health, lastError: target.lastError ?? '' };
    });
    if (states.every((state) => state.health === 'up')) return states;
    if (performance.now() - startedAt >= timeoutMs) throw new PrometheusTargetsDownError(timeoutMs, states);
    await new Promise((resolveDelay) => setTimeout(resolveDelay, pollIntervalMs));
  }
}

/** `POST /-/reload` (the process runs with --web.enable-lifecycle); throws PrometheusError on a non-2xx answer. */
export async function reloadPrometheus(url: string, role = 'Prometheus'): Promise<void> {
  const response = await fetch(`${url}/-/reload`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
  const body = await response.text();
  if (!response.ok) throw new PrometheusError(`${role} reload failed with HTTP ${response.status}: ${body.trim()}`);
}

/**
 * Polls `/api/v1/alertmanagers` until the Alertmanagers Prometheus's notifier sends to are exactly `addresses`
 * (`host:port`): after a reload, the notifier learns of a new one only after its discovery throttle (about 5 s in 2.x),
 * and alerts sent before then go nowhere. Throws PrometheusError naming what it saw when `timeoutMs` passes.
 */
export async function waitForAlertmanagers(
  url: string,
  addresses: readonly string[],
  timeoutMs: number,
  role = 'Prometheus',
): Promise<void> {
  const wanted = [...addresses].sort().join(',');
  const startedAt = performance.now();
  let seen = '(no answer)';
  for (;;) {
    try {
      const response = await fetch(`${url}/api/v1/alertmanagers`, { signal: AbortSignal.timeout(5_000) });
      const body = (await response.json()) as { data?: { activeAlertmanagers?: Array<{ url?: string }> } };
      seen = (body.data?.activeAlertmanagers ?? [])
        .map((alertmanager) => new URL(alertmanager.url ?? '', 'http://unknown').host)
        .sort()
        .join(',');
      if (seen === wanted) return;
    } catch {
      // Not answering this time: try again.
    }
    if (performance.now() - startedAt >= timeoutMs)
      throw new PrometheusError(
        `${role} did not pick up its Alertmanagers within ${timeoutMs} ms: it sends to [${seen}], expected [${wanted}]`,
      );
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 200));
  }
}
