import type { Clock } from '../../shared/clock/clock.js';
import type { CalibrationInput } from '../../shared/calibration/input.js';
import type { ClusterClient } from '../../shared/kube/types.js';
import type { MetricsSource } from '../../shared/metrics/types.js';
import type { CalibrationHistoryStore } from '../../shared/calibration/history/types.js';
import type { ReportStore } from '../../shared/reports/types.js';

/** The calibration's target as the handlers get it (the input's `target`). */
export type CalibrationTarget = CalibrationInput['target'];

/** The few logger methods the handlers use (Powertools' Logger has them). */
export interface CalibrationLogger {
  info(message: string, ...extra: unknown[]): void;
  warn(message: string, ...extra: unknown[]): void;
  error(message: string, ...extra: unknown[]): void;
}

/** The ports of the calibration handlers: what differs between AWS and a local run. */
export interface CalibrationDeps {
  /** A cluster client for the target (connectToEks in AWS and against the twin). */
  cluster(target: CalibrationTarget): Promise<ClusterClient>;
  /** Where the target's metrics are (AMP in AWS, the twin's Prometheus locally). */
  metricsSource(target: CalibrationTarget): MetricsSource;
  reports: ReportStore;
  history: CalibrationHistoryStore;
  clock: Clock;
  logger: CalibrationLogger;
  /**
   * The folder-like prefix of an execution's report and chart keys. Default
   * `calibrations/<cluster>/<namespace>/<deployment>/<execution name>`; the CLI uses `""` (its own folder per run).
   */
  reportPrefix?: (input: CalibrationInput, executionName: string) => string;
}

/** The default report prefix: one folder per deployment, one per execution inside it. */
export function defaultReportPrefix(input: CalibrationInput, executionName: string): string {
  const { cluster, namespace, deployment } = input.target;
  return `calibrations/${cluster}/${namespace}/${deployment}/${executionName}`;
}

/** A logger that drops everything (tests, quiet CLI runs). */
export const silentLogger: CalibrationLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
