import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbHistoryStore, historyTargetKey } from '../../shared/calibration/history/index.js';
import type { Thresholds } from '../../shared/calibration/index.js';
import { KEDA_KINDS } from '../../shared/keda/index.js';
import type { KubeObject } from '../../shared/kube/index.js';
import { ClusterConnections } from '../../shared/kube/connection/index.js';
import { catalogEntry } from '../../shared/metrics/index.js';
import { TWIN_CREDENTIALS } from '../twin/constants.js';
import type { TwinState } from '../twin/stateFile.js';
import { traceFromRange, type RateTrace } from '../whatif/index.js';
import { WhatIfError } from '../whatif/errors.js';
import { twinMetricsSource, twinTarget } from './twinTarget.js';

/**
 * What `vllm-pilot whatif` reads from a running twin, through the product's own adapters: the live ScaledObject (the
 * cluster client over the twin's EKS endpoint), the newest calibrated thresholds (the calibration history in the
 * twin's DynamoDB), and the target's request rate (the AMP client against the twin's Prometheus).
 */
export interface TwinWhatIfSources {
  /** The ScaledObject that scales the twin's Deployment. */
  liveScaledObject(): Promise<KubeObject>;
  /** The thresholds of the newest history record that has some, and its execution name. */
  calibratedThresholds(): Promise<{
    thresholds: Thresholds;
    executionName: string;
    requestShape: { promptTokens: number; maxTokens: number };
  }>;
  /** The target's completed-request rate over the last `hours`, one sample a minute. */
  requestRate(hours: number, nowMs: number): Promise<RateTrace>;
  /** Closes the clients' sockets. */
  close(): void;
}

/** A source on the twin has nothing the replay can use (no ScaledObject, no calibrated record). */
export class WhatIfTwinSourceMissingError extends WhatIfError {
  override name = 'WhatIfTwinSourceMissingError';
}

const RATE_STEP_SECONDS = 60;

export function twinWhatIfSources(state: TwinState): TwinWhatIfSources {
  const credentials = TWIN_CREDENTIALS;
  const dynamodb = new DynamoDBClient({ region: state.region, endpoint: state.aws.dynamodbEndpoint, credentials });
  const clusters = new ClusterConnections({ eksEndpoint: state.aws.eksEndpoint, credentials });
  const target = twinTarget(state);
  return {
    async liveScaledObject() {
      const cluster = await clusters.get(state.region, state.clusterName);
      const all = await cluster.list({ ...KEDA_KINDS.scaledObject, namespace: state.namespace });
      const found = all.find(
        (so) =>
          (so.spec as { scaleTargetRef?: { name?: string } } | undefined)?.scaleTargetRef?.name === state.deployment,
      );
      if (found === undefined)
        throw new WhatIfTwinSourceMissingError(
          `--candidate live: no ScaledObject in ${state.namespace} scales ${state.deployment} on the twin`,
        );
      return found;
    },
    async calibratedThresholds() {
      const store = new DynamoDbHistoryStore({ client: dynamodb, tableName: state.aws.historyTable });
      const key = historyTargetKey(target);
      const records = await store.list(key);
      // A rollback's record carries no thresholds of its own: the newest calibration that derived some counts.
      const record = records.find((r) => r.thresholds !== null);
      if (record?.thresholds == null)
        throw new WhatIfTwinSourceMissingError(
          `--candidate calibrated: the calibration history of ${key} holds no thresholds (run \`vllm-pilot calibrate\` first)`,
        );
      return {
        thresholds: record.thresholds,
        executionName: record.executionName,
        requestShape: record.report.provenance.requestShape,
      };
    },
    async requestRate(hours, nowMs) {
      const query = catalogEntry('requests_completed_rate').build(target, { rateWindow: '1m' });
      const series = await twinMetricsSource(state).range(query, {
        startMs: nowMs - hours * 3600 * 1000,
        endMs: nowMs,
        stepSeconds: RATE_STEP_SECONDS,
      });
      return traceFromRange(series, query, RATE_STEP_SECONDS);
    },
    close() {
      dynamodb.destroy();
      clusters.destroy();
    },
  };
}
