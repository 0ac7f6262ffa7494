import { stringify } from 'yaml';
import { PrometheusConfigError } from './errors.js';

/**
 * The scrape jobs of the twin's Prometheus, shaped like what the Prometheus Operator generates on EKS:
 * a ServiceMonitor for vLLM, the dcgm-exporter DaemonSet, and the kubelet's cAdvisor endpoint.
 */
export const SCRAPE_JOBS = {
  vllm: { metricsPath: '/metrics', honorLabels: false },
  // The exporter sets namespace/pod/container of the Pod using the GPU: they must win over the target's labels.
  'dcgm-exporter': { metricsPath: '/metrics', honorLabels: true },
  // kube-prometheus-stack's kubelet ServiceMonitor sets honorLabels: cAdvisor labels name the Pod, not the kubelet.
  'kubelet-cadvisor': { metricsPath: '/metrics/cadvisor', honorLabels: true },
} as const;

export type ScrapeJobName = keyof typeof SCRAPE_JOBS;
export const SCRAPE_JOB_NAMES = Object.keys(SCRAPE_JOBS) as ScrapeJobName[];

/** A file_sd target group: `host:port` addresses and the labels a ServiceMonitor would add. */
export interface TargetGroup {
  targets: string[];
  /** e.g. `namespace`, `pod`, `service`, `container`, `endpoint`. */
  labels?: Record<string, string>;
}

/** Target groups per job; a missing job has no targets. */
export type TargetGroups = Partial<Record<ScrapeJobName, TargetGroup[]>>;

export interface PrometheusConfigInput {
  scrapeIntervalSeconds: number;
  evaluationIntervalSeconds?: number;
  /** Absolute path of each job's file_sd file. */
  targetFiles: Record<ScrapeJobName, string>;
  ruleFiles?: readonly string[];
  externalLabels?: Record<string, string>;
  /** Where firing alerts go: Alertmanagers as `host:port` (none: alerts are evaluated and go nowhere). */
  alertmanagers?: readonly string[];
}

/**
 * How often Prometheus re-reads the file_sd files (it also watches them). Discovery is not the bottleneck: Prometheus
 * 2.x hands new target sets to the scrape manager at most every 5 s, so a new target is scraped 5-6 s after it is
 * written (measured with 2.42; the interval is not configurable there).
 */
export const FILE_SD_REFRESH = '1s';

const ADDRESS = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Renders prometheus.yml: global intervals, rule files and the three file_sd scrape jobs. */
export function renderPrometheusConfig(input: PrometheusConfigInput): string {
  const scrapeInterval = formatDuration(input.scrapeIntervalSeconds, 'scrapeIntervalSeconds');
  const evaluationInterval = formatDuration(
    input.evaluationIntervalSeconds ?? input.scrapeIntervalSeconds,
    'evaluationIntervalSeconds',
  );
  const config = {
    global: {
      scrape_interval: scrapeInterval,
      // The timeout may not exceed the interval (Prometheus rejects the config otherwise).
      scrape_timeout: scrapeInterval,
      evaluation_interval: evaluationInterval,
      ...externalLabelsOf(input.externalLabels),
    },
    ...ruleFilesOf(input.ruleFiles),
    ...alertingOf(input.alertmanagers),
    scrape_configs: scrapeConfigs(input.targetFiles),
  };
  return stringify(config);
}

export interface AgentConfigInput {
  scrapeIntervalSeconds: number;
  /** Absolute path of each job's file_sd file. */
  targetFiles: Record<ScrapeJobName, string>;
  /** Set here, on the Prometheus that remote-writes, so every written sample carries them (as AMP stores them). */
  externalLabels?: Record<string, string>;
  /** Where to remote-write: the relay's `http://127.0.0.1:PORT/api/v1/write`. */
  remoteWriteUrl: string;
}

/**
 * The queue of the agent's remote write. Prometheus 2.42's defaults are capacity 2500, max_shards 200,
 * max_samples_per_send 500 and batch_send_deadline 5s: with a 1 s scrape a batch would wait up to 5 s for company,
 * which adds an uncontrolled 0-5 s on top of the profile's lag. A 1 s deadline keeps batches small and frequent, so the
 * lag a query sees is the profile's (± one second). One shard: the relay then receives the batches in the order the
 * agent wrote them (several shards keep order per series only), and it answers at once, so one shard keeps up.
 */
export const AGENT_REMOTE_WRITE_QUEUE = {
  capacity: 2500,
  max_shards: 1,
  min_shards: 1,
  max_samples_per_send: 500,
  batch_send_deadline: '1s',
} as const;

/**
 * Renders the agent's prometheus.yml (run with `--enable-feature=agent`): the three file_sd scrape jobs and
 * `remote_write` to `remoteWriteUrl`. No rules and no evaluation interval: agent mode refuses `rule_files`.
 */
export function renderAgentConfig(input: AgentConfigInput): string {
  const scrapeInterval = formatDuration(input.scrapeIntervalSeconds, 'scrapeIntervalSeconds');
  const config = {
    global: {
      scrape_interval: scrapeInterval,
      scrape_timeout: scrapeInterval,
      ...externalLabelsOf(input.externalLabels),
    },
    scrape_configs: scrapeConfigs(input.targetFiles),
    remote_write: [
      { url: validateHttpUrl(input.remoteWriteUrl, 'remoteWriteUrl'), queue_config: AGENT_REMOTE_WRITE_QUEUE },
    ],
  };
  return stringify(config);
}

export interface ReceiverConfigInput {
  evaluationIntervalSeconds: number;
  ruleFiles?: readonly string[];
  /** Where firing alerts go: Alertmanagers as `host:port` (as AMP's ruler sends to the workspace's alert manager). */
  alertmanagers?: readonly string[];
}

/**
 * Renders the config of the Prometheus that stands in for AMP (run with `--web.enable-remote-write-receiver`): rules
 * and their evaluation interval, as AMP's ruler holds them, and no scrape job: every sample arrives by remote write.
 */
export function renderReceiverConfig(input: ReceiverConfigInput): string {
  const evaluationInterval = formatDuration(input.evaluationIntervalSeconds, 'evaluationIntervalSeconds');
  return stringify({
    global: { evaluation_interval: evaluationInterval },
    ...ruleFilesOf(input.ruleFiles),
    ...alertingOf(input.alertmanagers),
  });
}

/** Prometheus's `alerting` section: one Alertmanager set, API v2, by static address. */
function alertingOf(alertmanagers: readonly string[] | undefined): { alerting?: object } {
  if (!alertmanagers || alertmanagers.length === 0) return {};
  alertmanagers.forEach((address, index) => {
    const match = ADDRESS.exec(address);
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 65_535)
      throw new PrometheusConfigError(`alertmanagers[${index}]`, address, 'must be "host:port" with a port 1-65535');
  });
  return { alerting: { alertmanagers: [{ api_version: 'v2', static_configs: [{ targets: [...alertmanagers] }] }] } };
}

function externalLabelsOf(labels: Record<string, string> | undefined): { external_labels?: Record<string, string> } {
  if (labels === undefined) return {};
  validateLabels(labels, 'externalLabels');
  return Object.keys(labels).length > 0 ? { external_labels: labels } : {};
}

function ruleFilesOf(ruleFiles: readonly string[] | undefined): { rule_files?: string[] } {
  return ruleFiles && ruleFiles.length > 0 ? { rule_files: [...ruleFiles] } : {};
}

function scrapeConfigs(targetFiles: Record<ScrapeJobName, string>) {
  return SCRAPE_JOB_NAMES.map((job) => ({
    job_name: job,
    metrics_path: SCRAPE_JOBS[job].metricsPath,
    honor_labels: SCRAPE_JOBS[job].honorLabels,
    file_sd_configs: [{ files: [targetFiles[job]], refresh_interval: FILE_SD_REFRESH }],
  }));
}

function validateHttpUrl(url: string, field: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new PrometheusConfigError(
      field,
      url,
      'must be an absolute http(s) URL, e.g. http://127.0.0.1:9201/api/v1/write',
    );
  return url;
}

/**
 * Seconds as a Prometheus duration (`1s`, `90s`, `500ms`). Throws naming `field` when the value is not a positive
 * number of at least one millisecond.
 */
export function formatDuration(seconds: number, field: string): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0)
    throw new PrometheusConfigError(field, seconds, 'must be a positive number of seconds');
  const ms = Math.round(seconds * 1_000);
  if (ms < 1) throw new PrometheusConfigError(field, seconds, 'must be at least 0.001 seconds');
  return ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`;
}

/** Checks target groups; returns them with every job present (empty when not given). */
export function validateTargetGroups(groups: TargetGroups): Record<ScrapeJobName, TargetGroup[]> {
  if (typeof groups !== 'object' || groups === null || Array.isArray(groups))
    throw new PrometheusConfigError(
      'targetGroups',
      groups,
      `must be an object keyed by job (${SCRAPE_JOB_NAMES.join(', ')})`,
    );
  for (const key of Object.keys(groups)) {
    if (!(SCRAPE_JOB_NAMES as string[]).includes(key))
      throw new PrometheusConfigError(
        `targetGroups.${key}`,
        key,
        `unknown job; accepted: ${SCRAPE_JOB_NAMES.join(', ')}`,
      );
  }
  const result = {} as Record<ScrapeJobName, TargetGroup[]>;
  for (const job of SCRAPE_JOB_NAMES) {
    const jobGroups = groups[job] ?? [];
    if (!Array.isArray(jobGroups))
      throw new PrometheusConfigError(`targetGroups.${job}`, jobGroups, 'must be an array of { targets, labels }');
    result[job] = jobGroups.map((group, index) => {
      const field = `targetGroups.${job}[${index}]`;
      if (!Array.isArray(group?.targets))
        throw new PrometheusConfigError(`${field}.targets`, group?.targets, 'must be an array of "host:port" strings');
      group.targets.forEach((target, t) => {
        const match = typeof target === 'string' ? ADDRESS.exec(target) : null;
        if (!match || Number(match[2]) < 1 || Number(match[2]) > 65_535)
          throw new PrometheusConfigError(`${field}.targets[${t}]`, target, 'must be "host:port" with a port 1-65535');
      });
      if (group.labels !== undefined) validateLabels(group.labels, `${field}.labels`);
      return { targets: [...group.targets], ...(group.labels ? { labels: { ...group.labels } } : {}) };
    });
  }
  return result;
}

function validateLabels(labels: Record<string, string>, field: string): void {
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels))
    throw new PrometheusConfigError(field, labels, 'must be an object of label name to string value');
  for (const [name, value] of Object.entries(labels)) {
    if (!LABEL_NAME.test(name) || name.startsWith('__'))
      throw new PrometheusConfigError(
        `${field}.${name}`,
        name,
        'is not a usable label name: [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved by Prometheus)',
      );
    if (typeof value !== 'string') throw new PrometheusConfigError(`${field}.${name}`, value, 'must be a string');
  }
}
