import { rm } from 'node:fs/promises';
import type { TargetState } from './errors.js';
import { reloadPrometheus, waitForTargets, type WaitForTargetsOptions } from './prometheusApi.js';
import type { RelayCounts } from './remoteWriteRelay.js';
import { type ScrapeJobName, type TargetGroup, type TargetGroups, validateTargetGroups } from './scrapeConfig.js';
import { writeTargetFiles } from './targetFiles.js';

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
  /** Absolute paths: the caller's rule files, then the ones written from ruleFileContents. */
  ruleFiles: string[];
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
  /** Stops the processes (and the relay) in an order that loses nothing on the way; the data directory goes after. */
  stopParts(): Promise<void>;
  /** Stops the unexpected-exit logging and the parent-exit cleanup (from guardProcesses). */
  releaseGuard(): void;
}

/** The PrometheusInstance face of started parts: the same for one Prometheus and for AMP's three. */
export function assembleInstance(parts: InstanceParts): PrometheusInstance {
  let groups = parts.groups;
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
