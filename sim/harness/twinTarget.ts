import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbHistoryStore } from '../../shared/calibration/history/index.js';
import { HttpMetricsSource } from '../../shared/metrics/index.js';
import type { Target } from '../../shared/config/index.js';
import type { TwinState } from '../twin/stateFile.js';
import { TWIN_CREDENTIALS } from '../twin/constants.js';

/** The twin's deployment as the product sees it: a target, and its "AMP" (the twin's Prometheus). */

/** The target the twin serves, as a user would configure it for their own deployment. */
export function twinTarget(state: TwinState): Target {
  return {
    name: `twin-${state.profile}`,
    cluster: state.clusterName,
    namespace: state.namespace,
    deployment: state.deployment,
    model: state.model,
  };
}

/** The product's AMP client pointed at the twin's Prometheus (signing with the twin's throwaway credentials). */
export function twinMetricsSource(state: Pick<TwinState, 'prometheusUrl' | 'region'>): HttpMetricsSource {
  return new HttpMetricsSource({
    endpoint: state.prometheusUrl,
    region: state.region,
    credentials: () => Promise.resolve(TWIN_CREDENTIALS),
  });
}

/** Throwaway keys the twin accepts: TWIN_CREDENTIALS (the operator, cluster admin) or a TWIN_IDENTITIES function's. */
export interface TwinCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Makes the AWS SDK's default credential chain find the twin's throwaway credentials, for code that builds its own
 * clients from the environment (the Lambda handlers), as Lambda puts a function's role session into its environment.
 * Default: the operator's (cluster admin). Only for processes that talk to the twin.
 */
export function useTwinCredentials(credentials: TwinCredentials = TWIN_CREDENTIALS): void {
  process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
}

/**
 * The twin's calibration history (its dynalite table, as the stack names it), read with the twin's credentials; the
 * caller destroys the client when done.
 */
export function twinHistoryStore(state: Pick<TwinState, 'region' | 'aws'>): {
  history: DynamoDbHistoryStore;
  client: DynamoDBClient;
} {
  const client = new DynamoDBClient({
    region: state.region,
    endpoint: state.aws.dynamodbEndpoint,
    credentials: TWIN_CREDENTIALS,
  });
  return { history: new DynamoDbHistoryStore({ client, tableName: state.aws.historyTable }), client };
}
