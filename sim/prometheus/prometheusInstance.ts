import { rm } from 'node:fs/promises';
import { PrometheusConfigError, type TargetState } from './errors.js';
import { reloadPrometheus, waitForAlertmanagers, waitForTargets, type WaitForTargetsOptions } from './prometheusApi.js';
import type { RelayCounts } from './remoteWriteRelay.js';
import { writeRuleNamespace } from './ruleFiles.js';
import { type ScrapeJobName, type TargetGroup, type TargetGroups, validateTargetGroups } from './scrapeConfig.js';
import { writeTargetFiles } from './targetFiles.js';

/**
 * `--rules.alert.resend-delay` of the Prometheus that evaluates the rules (default 1m). Every reload of Prometheus 2.42
 * empties its notifier's Alertmanagers for about 5 s (discovery's throttle), and an alert that fires or resolves then
 * is sent again only after this delay; AMP's ruler has no such gap, so the twin keeps it short. Not shorter: firing
 * alerts are valid in Alertmanager for 4 × this delay (60 s), which must outlast an `amp-outage` (30 s by default),
 * or Alertmanager would resolve them while Prometheus is frozen.
 */
export const ALERT_RESEND_DELAY = '15s';

/** What both modes start from, checked once. */
export interface ValidatedStart {
  bin: string;
  scrapeIntervalSeconds: number;
  evaluationIntervalSeconds: number;
  groups: Record<ScrapeJobName, TargetGroup[]>;
  externalLabels: Record<string, string> | undefined;
  readyTimeoutMs: number;
  log: (message: string) => void;
  dataDir: string;
  targetFiles: Record<ScrapeJobName, string>;
  /** Absolute paths: the caller's rule files, then the ones written from ruleFileContents (and the namespaces' glob). */
  ruleFiles: string[];
  /** Where setRuleNamespace writes, when the instance was started with `ruleNamespaces`. */
  ruleNamespaceDir: string | undefined;
}

/** One Prometheus process of an instance. */
export interface PrometheusProcess {
  /** `http://127.0.0.1:PORT` */
  url: string;
  pid: number;
  configFile: string;
  /** Its stdout and stderr. */
  logFile: string;
}

/**
 * AMP's ingestion path, when the instance has one: a Prometheus in agent mode scrapes and remote-writes through a
 * relay that holds each batch before the query Prometheus (`url`) receives it.
 */
export interface IngestionPath {
  lagSeconds: number;
  jitterSeconds: number;
  /** The agent: it serves `/api/v1/targets` and `/metrics` (its `prometheus_remote_storage_*`), never queries. */
  agent: PrometheusProcess;
  /** The relay's write endpoint, `http://127.0.0.1:PORT/api/v1/write`. */
  relayUrl: string;
  /** What the relay has received, forwarded, held and dropped so far. */
  relayCounts(): RelayCounts;
}

/** A running Prometheus started by this process, with its own ports, configs and temporary storage. */
export interface PrometheusInstance {
  /** `http://127.0.0.1:PORT`: the Prometheus that answers queries and evaluates the rules. */
  url: string;
  /** The pid of the Prometheus at `url`. */
  pid: number;
  /** Temporary directory holding the configs, the file_sd files, the storage and the logs; removed by stop(). */
  dataDir: string;
  /** The config of the Prometheus at `url`. */
  configFile: string;
  /** The stdout and stderr of the Prometheus at `url`. */
  logFile: string;
  /**
   * undefined when the Prometheus at `url` scrapes the targets itself (no lag); else the agent and the relay in
   * front of it, and the lag they add.
   */
  ingestion: IngestionPath | undefined;
  /**
   * Replaces the targets of every job (a job left out has none) of the Prometheus that scrapes. Prometheus 2.x starts
   * scraping new targets about 5 s later (its discovery-to-scrape throttle); waitForTargets waits for that.
   */
  setTargets(groups: TargetGroups): Promise<void>;
  /**
   * Resolves once every current target is discovered and `up` on the Prometheus that scrapes (the agent, with an
   * ingestion path: AMP has no targets API); else throws PrometheusTargetsDownError. With an ingestion path, the
   * samples reach queries only about `ingestion.lagSeconds` later.
   */
  waitForTargets(options: WaitForTargetsOptions): Promise<TargetState[]>;
  /** Reloads the configs and rule files (`POST /-/reload` on each Prometheus process). */
  reload(): Promise<void>;
  /**
   * Installs (or, with `text` undefined, removes) the rule file of one rule groups namespace, as AMP's ruler loads
   * one, and reloads the Prometheus that evaluates the rules (then, with Alertmanagers set, waits until its notifier
   * sends to them again: a reload empties it for about 5 s, and alerts sent meanwhile wait for the resend delay). When
   * that reload fails, the previous file is put back (and reloaded) before the error is thrown. Only for an instance
   * started with `ruleNamespaces: true`.
   */
  setRuleNamespace(name: string, text: string | undefined): Promise<void>;
  /**
   * Points the Prometheus that evaluates the rules at these Alertmanagers (`host:port`; none: alerts go nowhere),
   * reloads it, and resolves once its notifier sends there (about 5 s later). Alerts already firing are sent again at
   * Prometheus's resend delay (1 minute).
   */
  setAlertmanagers(addresses: readonly string[]): Promise<void>;
  /** SIGTERM, SIGKILL after a grace period, then removes the data directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface InstanceParts {
  query: PrometheusProcess;
  /** The URL of the Prometheus that scrapes (the query one, or the agent). */
  scrapeUrl: string;
  dataDir: string;
  targetFiles: Record<ScrapeJobName, string>;
  groups: Record<ScrapeJobName, TargetGroup[]>;
  ingestion: IngestionPath | undefined;
  /** Each process to reload, in order. */
  reloadTargets: ReadonlyArray<{ url: string; role: string }>;
  /** Names the query process in errors: `Prometheus`, `Prometheus (AMP query side)`. */
  queryRole: string;
  ruleNamespaceDir: string | undefined;
  /** Rewrites the query process's config with these Alertmanagers (it is not reloaded here). */
  writeQueryConfig(alertmanagers: readonly string[]): Promise<void>;
  /** Stops the processes (and the relay) in an order that loses nothing on the way; the data directory goes after. */
  stopParts(): Promise<void>;
  /** Stops the unexpected-exit logging and the parent-exit cleanup (from guardProcesses). */
  releaseGuard(): void;
}

/** Prometheus 2.x hands new Alertmanagers to its notifier within about 5 s of a reload; three times that is a fault. */
const ALERTMANAGER_DISCOVERY_TIMEOUT_MS = 15_000;

/** The PrometheusInstance face of started parts: the same for one Prometheus and for AMP's three. */
export function assembleInstance(parts: InstanceParts): PrometheusInstance {
  let groups = parts.groups;
  let alertmanagers: readonly string[] = [];
  let stopping: Promise<void> | undefined;
  return {
    url: parts.query.url,
    pid: parts.query.pid,
    dataDir: parts.dataDir,
    configFile: parts.query.configFile,
    logFile: parts.query.logFile,
    ingestion: parts.ingestion,
    async setTargets(next) {
      const validated = validateTargetGroups(next);
      await writeTargetFiles(parts.targetFiles, validated);
      groups = validated;
    },
    waitForTargets(waitOptions) {
      return waitForTargets(parts.scrapeUrl, groups, waitOptions);
    },
    async reload() {
      for (const { url, role } of parts.reloadTargets) await reloadPrometheus(url, role);
    },
    async setRuleNamespace(name, text) {
      const dir = parts.ruleNamespaceDir;
      if (dir === undefined)
        throw new PrometheusConfigError('ruleNamespaces', false, 'start Prometheus with ruleNamespaces: true first');
      const previous = await writeRuleNamespace(dir, name, text);
      try {
        await reloadPrometheus(parts.query.url, parts.queryRole);
      } catch (error) {
        await writeRuleNamespace(dir, name, previous);
        await reloadPrometheus(parts.query.url, parts.queryRole).catch(() => undefined);
        throw error;
      }
      // A reload of Prometheus 2.x empties its notifier's Alertmanagers until discovery hands them back (about 5 s):
      // the change is in effect once alerts are delivered again.
      if (alertmanagers.length > 0)
        await waitForAlertmanagers(parts.query.url, alertmanagers, ALERTMANAGER_DISCOVERY_TIMEOUT_MS, parts.queryRole);
    },
    async setAlertmanagers(addresses) {
      alertmanagers = [...addresses];
      await parts.writeQueryConfig(addresses);
      await reloadPrometheus(parts.query.url, parts.queryRole);
      await waitForAlertmanagers(parts.query.url, addresses, ALERTMANAGER_DISCOVERY_TIMEOUT_MS, parts.queryRole);
    },
    stop() {
      stopping ??= (async () => {
        parts.releaseGuard();
        await parts.stopParts();
        await rm(parts.dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
