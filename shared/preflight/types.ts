import type { AlertSettings } from '../alerts/index.js';
import type { EvaluatorHeartbeat } from '../alerts/heartbeat/index.js';
import type { CalibrationHistoryStore } from '../calibration/history/index.js';
import type { Clock } from '../clock/index.js';
import type { ClusterClient, ObjectRef } from '../kube/index.js';
import type { AlertRulesSource, MetricsSource } from '../metrics/index.js';
import type { Target } from '../config/index.js';

/**
 * Preflight: the monitoring guide's eleven "production double-check points" (section 7), each a check that looks at
 * the cluster, AMP and the calibration history and says pass / warn / fail, why, what it looked at, and the fix.
 */

/** `fail` blocks traffic (the CLI exits non-zero); `warn` is advice a platform engineer should read. */
export const CHECK_STATUSES = { pass: 'pass', warn: 'warn', fail: 'fail' } as const;
export type CheckStatus = (typeof CHECK_STATUSES)[keyof typeof CHECK_STATUSES];

/** The eleven checks, in the guide's order (the value is the guide's item number). */
export const CHECK_IDS = {
  vllmMetricsExposed: 'vllm-metrics-exposed',
  serviceMonitorScraping: 'service-monitor-scraping',
  dcgmExporter: 'dcgm-exporter',
  grafanaDashboards: 'grafana-dashboards',
  alertRules: 'alert-rules',
  kedaScaledObject: 'keda-scaled-object',
  karpenterDoNotDisrupt: 'karpenter-do-not-disrupt',
  loadTest: 'load-test',
  warmup: 'warmup',
  gpuMemorySettings: 'gpu-memory-settings',
  scaleCycle: 'scale-cycle',
} as const;
export type CheckId = (typeof CHECK_IDS)[keyof typeof CHECK_IDS];

/** What a check looked at: a Kubernetes object, a PromQL query and what it returned, or a stored record. */
export type Evidence =
  | { kind: 'object'; ref: ObjectRef; found: boolean; detail?: Record<string, unknown> }
  | { kind: 'series'; query: string; series: number; detail?: Record<string, unknown> }
  | { kind: 'record'; store: string; key: string; found: boolean; detail?: Record<string, unknown> }
  | { kind: 'setting'; name: string; value: string | number | boolean | null; detail?: Record<string, unknown> };

/** The outcome of one check. */
export interface CheckResult {
  id: CheckId;
  /** The guide's item number, 1-11. */
  item: number;
  title: string;
  status: CheckStatus;
  /** One sentence a platform engineer can act on: what was found, with the figures. */
  reason: string;
  evidence: Evidence[];
  /** What to do about a warn or fail (a command, a manifest field, a README section); absent on pass. */
  fix?: string;
}

/** The deployment under check: a metrics target plus the Kubernetes names preflight needs. */
export interface PreflightTarget extends Target {
  /** The vLLM Service the ServiceMonitor must select; default: the Deployment's name. */
  service?: string;
  /** The ScaledObject that scales the Deployment; default: any ScaledObject whose scaleTargetRef names it. */
  scaledObject?: string;
  /** The target's alert settings (the evaluator's `alerts`): check 5 compares AMP's rules with the ones they make. */
  alerts?: AlertSettings;
}

/**
 * Who evaluates the alert rules (the stage setting `alerting.engine`): this control plane's alert-evaluator Lambda,
 * or AMP's ruler and Alertmanager. Check 5 asks each for its own evidence.
 */
export const ALERTING_ENGINES = { lambda: 'lambda', amp: 'amp' } as const;
export type AlertingEngine = (typeof ALERTING_ENGINES)[keyof typeof ALERTING_ENGINES];

/** The evaluator's heartbeat, as check 5 reads it (DynamoDbHeartbeatStore: the alert state table). */
export interface EvaluatorHeartbeatSource {
  /** The last cycle the evaluator recorded, or undefined when it never recorded one. */
  read(signal?: AbortSignal): Promise<EvaluatorHeartbeat | undefined>;
}

/** AMP's rule groups namespaces, as check 5 reads them (adapter: @aws-sdk/client-amp DescribeRuleGroupsNamespace). */
export interface AmpRuleGroupsSource {
  /** The namespace's data as AMP holds it (a Prometheus rules file, YAML), or undefined when there is no such namespace. */
  describeRuleGroups(namespace: string, signal?: AbortSignal): Promise<string | undefined>;
}

/** Tunables, parsed once (shared/preflight/settings.ts); every field has a default suited to AWS. */
export interface PreflightSettings {
  /** A scrape older than this is stale (check 2). Default 120 s: four 30 s scrape intervals. */
  freshnessSeconds: number;
  /** How far back check 11 looks for a scale-out followed by a scale-in, and its query step. Default 7 d, 60 s. */
  scaleCycleLookbackSeconds: number;
  scaleCycleStepSeconds: number;
  /** Above this `--gpu-memory-utilization` check 10 warns. Default 0.9 (the guide recommends 0.85). */
  gpuMemoryUtilizationWarnAbove: number;
  /** The warmup requests a replica must have served before it is Ready (check 9). Default 100, the guide's. */
  warmupRequests: number;
  /** Who evaluates the alert rules (check 5's evidence): `lambda` (the default) or `amp`. */
  alertingEngine: AlertingEngine;
  /** The AMP rule groups namespace the AMP engine installs (`<service>-<stage>` in the stack); no default. */
  ampRuleNamespace?: string;
  /** The Grafana sidecar's ConfigMap label (check 4). Default `grafana_dashboard` = `1`, the chart's default. */
  dashboardLabel: { name: string; value: string };
}

/** Everything a check may read; checks never write. */
export interface PreflightContext {
  target: PreflightTarget;
  cluster: ClusterClient;
  metrics: MetricsSource;
  rules: AlertRulesSource;
  /** Check 5's evidence: the evaluator's heartbeat (Lambda engine) or AMP's rule groups (AMP engine). */
  alerting: { heartbeat?: EvaluatorHeartbeatSource; ampRuleGroups?: AmpRuleGroupsSource };
  history: CalibrationHistoryStore;
  settings: PreflightSettings;
  clock: Clock;
  signal?: AbortSignal;
}

/** One double-check point: one file in shared/preflight/checks/, listed once in the registry. */
export interface PreflightCheck {
  id: CheckId;
  item: number;
  title: string;
  /** Resolves to the result; a thrown error becomes `fail` with the error's name and message (runPreflight). */
  run(context: PreflightContext): Promise<Omit<CheckResult, 'id' | 'item' | 'title'>>;
}

/** The whole report for one target. */
export interface PreflightReport {
  target: PreflightTarget;
  checkedAt: string;
  results: CheckResult[];
  counts: Record<CheckStatus, number>;
  /** `fail` when any check failed, else `warn` when any warned, else `pass`. */
  status: CheckStatus;
}
