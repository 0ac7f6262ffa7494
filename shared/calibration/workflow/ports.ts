import type { Clock } from '../../clock/index.js';
import type { ClusterClient } from '../../kube/index.js';
import type { LoggerPort } from '../../log/index.js';
import type { MetricsSource } from '../../metrics/index.js';
import type { ReportStore } from '../../reports/index.js';
import type { SilenceStore } from '../../alerts/silences/index.js';
import type { CalibrationHistoryStore } from '../history/index.js';
import type { CalibrationInput } from '../input.js';

/** The calibration's target as the steps get it (the input's `target`). */
export type CalibrationTarget = CalibrationInput['target'];

/**
 * The ports of the calibration's steps: what differs between AWS (EKS, AMP, S3, DynamoDB) and a local run (the
 * twin's endpoints). Each step takes only the ports it uses, so each function builds only those.
 */
export interface CalibrationPorts {
  /** A cluster client for the target (one connection per cluster for the life of the container). */
  cluster(target: Pick<CalibrationTarget, 'cluster' | 'region'>): Promise<ClusterClient>;
  /** Where the target's metrics are (AMP in AWS, the twin's Prometheus locally). */
  metricsSource(target: CalibrationTarget): MetricsSource;
  reports: ReportStore;
  history: CalibrationHistoryStore;
  /**
   * Where alert silences are kept: Deploy mutes the target's alerts while the calibration holds it, the cleanup
   * unmutes them. Absent (no silences table configured): the calibration's saturation pages as any would.
   */
  silences?: SilenceStore;
  clock: Clock;
  logger: LoggerPort;
  /**
   * The folder-like prefix of an execution's report and chart keys. Default
   * `calibrations/<cluster>/<namespace>/<deployment>/<execution name>`; the CLI uses `""` (its own folder per run).
   */
  reportPrefix?: (input: CalibrationInput, executionName: string) => string;
  /**
   * The prefix of a many-target execution's combined report. Default `calibrations/batches/<execution name>`; the CLI
   * uses `""` (its own folder per run).
   */
  batchReportPrefix?: (executionName: string) => string;
}

/** The ports every step has: the clock and the logger. */
export type BasePorts = Pick<CalibrationPorts, 'clock' | 'logger'>;

/** The default report prefix: one folder per deployment, one per execution inside it. */
export function defaultReportPrefix(
  input: { target: Pick<CalibrationInput['target'], 'cluster' | 'namespace' | 'deployment'> },
  executionName: string,
): string {
  const { cluster, namespace, deployment } = input.target;
  return `calibrations/${cluster}/${namespace}/${deployment}/${executionName}`;
}

/** The default prefix of a many-target execution's combined report (its targets' reports keep their own). */
export function defaultBatchReportPrefix(executionName: string): string {
  return `calibrations/batches/${executionName}`;
}
