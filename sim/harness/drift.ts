import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbHistoryStore } from '../../shared/calibration/history/index.js';
import { checkDrift, type DriftCheck, type DriftCheckOptions } from '../../shared/drift/index.js';
import { ClusterConnections } from '../../shared/kube/connection/index.js';
import type { TwinState } from '../twin/stateFile.js';
import { TWIN_CREDENTIALS } from '../twin/constants.js';
import { twinMetricsSource, twinTarget } from './twinTarget.js';

/**
 * Drift detection on the twin, as on AWS: the cluster through the twin's EKS endpoint and the product's own EKS
 * connection, AMP as the twin's Prometheus, the history in the twin's DynamoDB.
 */
export async function checkTwinDrift(
  state: TwinState,
  options: Omit<DriftCheckOptions, 'timeMs'> & { timeMs?: number } = {},
): Promise<DriftCheck> {
  const credentials = TWIN_CREDENTIALS;
  const dynamodb = new DynamoDBClient({ region: state.region, endpoint: state.aws.dynamodbEndpoint, credentials });
  const clusters = new ClusterConnections({ eksEndpoint: state.aws.eksEndpoint, credentials });
  try {
    const target = twinTarget(state);
    return await checkDrift(
      {
        cluster: await clusters.get(state.region, target.cluster),
        source: twinMetricsSource(state),
        history: new DynamoDbHistoryStore({ client: dynamodb, tableName: state.aws.historyTable }),
      },
      target,
      { ...options, timeMs: options.timeMs ?? Date.now() },
    );
  } finally {
    dynamodb.destroy();
  }
}
