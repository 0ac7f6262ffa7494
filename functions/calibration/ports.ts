import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDbSilenceStore } from '../../shared/alerts/silences/index.js';
import { DynamoDbHistoryStore } from '../../shared/calibration/history/index.js';
import type { CalibrationPorts, CalibrationTarget } from '../../shared/calibration/workflow/index.js';
import { ClusterConnections } from '../../shared/kube/connection/index.js';
import { HttpMetricsSource } from '../../shared/metrics/index.js';
import { S3ReportStore } from '../../shared/reports/index.js';
import type { CalibrationConfig } from './config.js';

/**
 * The calibration's real adapters, one builder per port, so each function's entry builds (and its bundle carries)
 * only the ports its step uses. Each is built once per Lambda container.
 */

/** The target's EKS cluster: one connection per cluster for the life of the container. */
export function eksCluster(config: CalibrationConfig): CalibrationPorts['cluster'] {
  const connections = new ClusterConnections(
    config.eksEndpoint === undefined ? {} : { eksEndpoint: config.eksEndpoint },
  );
  return (target: Pick<CalibrationTarget, 'cluster' | 'region'>) => connections.get(target.region, target.cluster);
}

/** The target's AMP workspace over SigV4, one client per workspace. */
export function ampMetrics(): CalibrationPorts['metricsSource'] {
  const sources = new Map<string, HttpMetricsSource>();
  return (target: CalibrationTarget) => {
    const key = `${target.region} ${target.ampWorkspaceUrl}`;
    let source = sources.get(key);
    if (source === undefined) {
      source = new HttpMetricsSource({ endpoint: target.ampWorkspaceUrl, region: target.region });
      sources.set(key, source);
    }
    return source;
  };
}

/** The report bucket. */
export function s3Reports(config: CalibrationConfig): CalibrationPorts['reports'] {
  return new S3ReportStore({
    client: new S3Client({
      region: config.region,
      ...(config.s3Endpoint === undefined ? {} : { endpoint: config.s3Endpoint, forcePathStyle: true }),
    }),
    bucket: config.reportBucket,
  });
}

/** The calibration history table. */
export function dynamoDbHistory(config: CalibrationConfig): CalibrationPorts['history'] {
  return new DynamoDbHistoryStore({
    client: new DynamoDBClient({
      region: config.region,
      ...(config.dynamodbEndpoint === undefined ? {} : { endpoint: config.dynamodbEndpoint }),
    }),
    tableName: config.historyTable,
  });
}

/** The alert silences table, when the stack configures one (ALERT_SILENCES_TABLE); else none. */
export function dynamoDbSilences(config: CalibrationConfig): CalibrationPorts['silences'] {
  if (config.silencesTable === undefined) return undefined;
  return new DynamoDbSilenceStore({
    client: new DynamoDBClient({
      region: config.region,
      ...(config.dynamodbEndpoint === undefined ? {} : { endpoint: config.dynamodbEndpoint }),
    }),
    tableName: config.silencesTable,
  });
}

/** `{ silences }` when the stack configures a silences table, else nothing (exactOptionalPropertyTypes). */
export function silencesOf(config: CalibrationConfig): Pick<CalibrationPorts, 'silences'> {
  const silences = dynamoDbSilences(config);
  return silences === undefined ? {} : { silences };
}
