import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PrometheusConfigError } from './errors.js';
import { guardProcesses, launchPrometheus, terminate } from './launch.js';
import {
  ALERT_RESEND_DELAY,
  assembleInstance,
  type PrometheusInstance,
  type ValidatedStart,
} from './prometheusInstance.js';
import { ruleNamespaceGlob, writeRuleFiles } from './ruleFiles.js';
import { formatDuration, renderPrometheusConfig, type TargetGroups, validateTargetGroups } from './scrapeConfig.js';
import { startAmp } from './startAmp.js';
import { targetFilePaths, writeTargetFiles } from './targetFiles.js';

export type { IngestionPath, PrometheusInstance, PrometheusProcess } from './prometheusInstance.js';
export type { WaitForTargetsOptions } from './prometheusApi.js';

export interface StartPrometheusOptions {
  /** The Prometheus binary (from ensurePrometheus / locatePrometheus). */
  bin: string;
  scrapeIntervalSeconds: number;
  /** Rule evaluation interval (default: the scrape interval). */
  evaluationIntervalSeconds?: number;
  /** The initial targets per job; change them later with setTargets. */
  targetGroups: TargetGroups;
  /** Rule files to load (resolved to absolute paths). */
  ruleFiles?: readonly string[];
  /**
   * Rule files given as their text, by file name (`vllm-alerts.rules.yaml`): written into the data directory and
   * loaded after `ruleFiles`, so a caller holding rules in code needs no file of its own (and nothing to clean up).
   */
  ruleFileContents?: Readonly<Record<string, string>>;
  /**
   * Rule files installed later, one per AMP rule groups namespace (`setRuleNamespace`): a directory in the data
   * directory that the config loads with a glob. Default false.
   */
  ruleNamespaces?: boolean;
  /** `global.external_labels`, e.g. `{ cluster: 'twin' }` as a Prometheus that remote-writes to AMP would set. */
  externalLabels?: Record<string, string>;
  /**
   * AMP between the scrape and the queries (a profile's `amp`). With a lag above 0, a Prometheus in agent mode
   * scrapes and remote-writes through a relay holding each batch lag ± uniform jitter (never out of order) to the
   * Prometheus that answers queries and evaluates the rules. Absent or lag 0: one Prometheus scrapes and answers.
   */
  remoteWrite?: { ingestionLagSeconds: number; ingestionJitterSeconds: number };
  /** How long to wait for `/-/ready` (default 30 s), per Prometheus process. */
  readyTimeoutMs?: number;
  /** Progress and decisions, one line each. */
  log?: (message: string) => void;
}

const DEFAULT_READY_TIMEOUT_MS = 30_000;

/**
 * Starts Prometheus on free loopback ports with file-based discovery for the vllm, dcgm and cAdvisor jobs: one
 * process, or, with `remoteWrite.ingestionLagSeconds` > 0, AMP's three parts (agent, relay, query Prometheus).
 */
export async function startPrometheus(options: StartPrometheusOptions): Promise<PrometheusInstance> {
  const log = options.log ?? (() => undefined);
  if (typeof options.bin !== 'string' || options.bin.length === 0)
    throw new PrometheusConfigError('bin', options.bin, 'must be the path of the Prometheus binary');
  const groups = validateTargetGroups(options.targetGroups);
  formatDuration(options.scrapeIntervalSeconds, 'scrapeIntervalSeconds');
  const evaluationIntervalSeconds = options.evaluationIntervalSeconds ?? options.scrapeIntervalSeconds;
  formatDuration(evaluationIntervalSeconds, 'evaluationIntervalSeconds');
  const remoteWrite = validateRemoteWrite(options.remoteWrite);

  const dataDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-prometheus-'));
  try {
    const targetFiles = targetFilePaths(join(dataDir, 'targets'));
    await mkdir(join(dataDir, 'targets'));
    await writeTargetFiles(targetFiles, groups);
    const ownRuleFiles = await writeRuleFiles(join(dataDir, 'rules'), options.ruleFileContents ?? {});
    const ruleNamespaceDir = options.ruleNamespaces === true ? join(dataDir, 'rule-namespaces') : undefined;
    if (ruleNamespaceDir !== undefined) await mkdir(ruleNamespaceDir);
    const start: ValidatedStart = {
      bin: options.bin,
      scrapeIntervalSeconds: options.scrapeIntervalSeconds,
      evaluationIntervalSeconds,
      groups,
      externalLabels: options.externalLabels,
      readyTimeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
      log,
      dataDir,
      targetFiles,
      ruleFiles: [
        ...(options.ruleFiles ?? []).map((file) => resolve(file)),
        ...ownRuleFiles,
        ...(ruleNamespaceDir === undefined ? [] : [ruleNamespaceGlob(ruleNamespaceDir)]),
      ],
      ruleNamespaceDir,
    };
    return remoteWrite.ingestionLagSeconds > 0 ? await startAmp(start, remoteWrite) : await startSingle(start);
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** Today's twin and AMP with no lag: one Prometheus scrapes, stores, evaluates the rules and answers queries. */
async function startSingle(start: ValidatedStart): Promise<PrometheusInstance> {
  const { dataDir, log } = start;
  const configFile = join(dataDir, 'prometheus.yml');
  const logFile = join(dataDir, 'prometheus.log');
  const tsdbDir = join(dataDir, 'tsdb');
  await mkdir(tsdbDir);
  const writeQueryConfig = (alertmanagers: readonly string[]) =>
    writeFile(
      configFile,
      renderPrometheusConfig({
        scrapeIntervalSeconds: start.scrapeIntervalSeconds,
        evaluationIntervalSeconds: start.evaluationIntervalSeconds,
        targetFiles: start.targetFiles,
        ruleFiles: start.ruleFiles,
        ...(start.externalLabels ? { externalLabels: start.externalLabels } : {}),
        alertmanagers,
      }),
    );
  await writeQueryConfig([]);
  const running = await launchPrometheus({
    bin: start.bin,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${tsdbDir}`,
      '--web.enable-lifecycle',
      `--rules.alert.resend-delay=${ALERT_RESEND_DELAY}`,
    ],
    identity: { flag: 'storage.tsdb.path', path: tsdbDir },
    logFile,
    readyTimeoutMs: start.readyTimeoutMs,
    role: 'Prometheus',
    log,
  });
  log(`Prometheus ready at ${running.url} (pid ${running.pid}, data ${dataDir})`);
  return assembleInstance({
    query: { url: running.url, pid: running.pid, configFile, logFile },
    scrapeUrl: running.url,
    dataDir,
    targetFiles: start.targetFiles,
    groups: start.groups,
    ingestion: undefined,
    reloadTargets: [{ url: running.url, role: 'Prometheus' }],
    queryRole: 'Prometheus',
    ruleNamespaceDir: start.ruleNamespaceDir,
    writeQueryConfig,
    async stopParts() {
      await terminate(running.proc);
      log(`Prometheus (pid ${running.pid}) stopped`);
    },
    releaseGuard: guardProcesses([{ running, role: 'Prometheus' }], dataDir, log),
  });
}

/** The profile's `amp` bounds (sim/profile/profile.ts): lag 0-300 s, jitter 0-120 s. */
const MAX_LAG_SECONDS = 300;
const MAX_JITTER_SECONDS = 120;

function validateRemoteWrite(
  remoteWrite: StartPrometheusOptions['remoteWrite'],
): NonNullable<StartPrometheusOptions['remoteWrite']> {
  if (remoteWrite === undefined) return { ingestionLagSeconds: 0, ingestionJitterSeconds: 0 };
  const { ingestionLagSeconds: lag, ingestionJitterSeconds: jitter } = remoteWrite;
  if (typeof lag !== 'number' || !Number.isFinite(lag) || lag < 0 || lag > MAX_LAG_SECONDS)
    throw new PrometheusConfigError(
      'remoteWrite.ingestionLagSeconds',
      lag,
      `must be a number of seconds from 0 to ${MAX_LAG_SECONDS}`,
    );
  if (typeof jitter !== 'number' || !Number.isFinite(jitter) || jitter < 0 || jitter > MAX_JITTER_SECONDS)
    throw new PrometheusConfigError(
      'remoteWrite.ingestionJitterSeconds',
      jitter,
      `must be a number of seconds from 0 to ${MAX_JITTER_SECONDS}`,
    );
  return { ingestionLagSeconds: lag, ingestionJitterSeconds: jitter };
}
