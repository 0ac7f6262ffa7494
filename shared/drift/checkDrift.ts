import type { CalibrationHistoryStore } from '../calibration/history/index.js';
import { historyTargetKey } from '../calibration/history/index.js';
import type { Target } from '../config/index.js';
import type { ClusterClient } from '../kube/index.js';
import type { MetricsSource } from '../metrics/index.js';
import { matchCalibration, podTemplateOf } from '../preflight/index.js';
import { assessDrift, DRIFT_DEFAULTS, type DriftAssessment, type DriftThresholds } from './detect.js';
import { DriftDeploymentNotFoundError } from './errors.js';
import { type LiveEvidence, readLiveEvidence } from './evidence.js';

/** What drift detection reads: the target's cluster, its AMP workspace, the calibration history. */
export interface DriftPorts {
  cluster: ClusterClient;
  source: MetricsSource;
  history: CalibrationHistoryStore;
}

export interface DriftCheckOptions {
  /** The live window read from AMP (default 600 s: long enough for a queue's trend, short enough to be "now"). */
  windowSeconds?: number;
  thresholds?: DriftThresholds;
  timeMs: number;
}

export const DEFAULT_DRIFT_WINDOW_SECONDS = 600;

/** One target's drift check: the assessment and the live evidence it judged. */
export interface DriftCheck extends DriftAssessment {
  target: string;
  live: LiveEvidence;
}

/**
 * Compares a target with its last calibration: the live Deployment's Pod template with the record's provenance
 * (preflight's matchCalibration, the memory flags included), and the live queue and latency read from AMP with the
 * capacity and latencies the calibration measured (assessDrift). Reads only.
 */
export async function checkDrift(ports: DriftPorts, target: Target, options: DriftCheckOptions): Promise<DriftCheck> {
  const windowSeconds = options.windowSeconds ?? DEFAULT_DRIFT_WINDOW_SECONDS;
  const [record, deployment, live] = await Promise.all([
    ports.history.latest(historyTargetKey(target)),
    ports.cluster.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: target.namespace,
      name: target.deployment,
    }),
    readLiveEvidence(ports.source, target, windowSeconds, options.timeMs),
  ]);
  if (deployment === undefined) throw new DriftDeploymentNotFoundError(target.namespace, target.deployment);
  const differences =
    record === undefined
      ? []
      : (() => {
          const match = matchCalibration(record, podTemplateOf(deployment), target.model);
          return [...match.differences, ...match.memoryDifferences];
        })();
  const assessment = assessDrift(record, differences, live, options.thresholds ?? DRIFT_DEFAULTS);
  return { target: target.name, live, ...assessment };
}
