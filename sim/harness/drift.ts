import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Logger } from '@aws-lambda-powertools/logger';
import {
  createHandler as createDriftDetector,
  depsFromEnvironment as driftDetectorDeps,
  type DriftDetectorResult,
} from '../../functions/drift-detector/handler.js';
import { DynamoDbHistoryStore } from '../../shared/calibration/history/index.js';
import { checkDrift, type DriftCheck, type DriftCheckOptions } from '../../shared/drift/index.js';
import { ClusterConnections } from '../../shared/kube/connection/index.js';
import type { TwinState } from '../twin/stateFile.js';
import { credentialsOf, TWIN_IDENTITIES } from '../twin/constants.js';
import { functionLogger, lambdaContext, scheduledEvent } from './lambda.js';
import { type TwinCredentials, twinMetricsSource, twinTarget, useTwinCredentials } from './twinTarget.js';

/**
 * Drift detection on the twin, as on AWS: the cluster through the twin's EKS endpoint and the product's own EKS
 * connection, AMP as the twin's Prometheus, the history in the twin's DynamoDB.
 */
export async function checkTwinDrift(
  state: TwinState,
  options: Omit<DriftCheckOptions, 'timeMs'> & { timeMs?: number; credentials?: TwinCredentials } = {},
): Promise<DriftCheck> {
  // The drift detector's own identity (read-only RBAC), as on AWS, unless told otherwise.
  const { credentials = credentialsOf(TWIN_IDENTITIES.driftDetector), ...checkOptions } = options;
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
      { ...checkOptions, timeMs: checkOptions.timeMs ?? Date.now() },
    );
  } finally {
    dynamodb.destroy();
  }
}

/** The drift detector's environment on the twin: its target with `drift` settings, the twin's endpoints. */
export function driftDetectorEnvironment(state: TwinState, drift?: unknown): Record<string, string> {
  return {
    TARGETS: JSON.stringify([{ ...twinTarget(state), ...(drift === undefined ? {} : { drift }) }]),
    AMP_WORKSPACE_URL: state.prometheusUrl,
    AWS_REGION: state.region,
    DRIFT_TOPIC_ARN: state.aws.preflightTopicArn,
    HISTORY_TABLE: state.aws.historyTable,
    ...(state.aws.calibrationStateMachineArn === undefined
      ? {}
      : { STATE_MACHINE_ARN: state.aws.calibrationStateMachineArn }),
    EKS_ENDPOINT: state.aws.eksEndpoint,
    SNS_ENDPOINT: state.aws.snsEndpoint,
    DYNAMODB_ENDPOINT: state.aws.dynamodbEndpoint,
    ...(state.aws.stepFunctionsEndpoint === undefined
      ? {}
      : { STEP_FUNCTIONS_ENDPOINT: state.aws.stepFunctionsEndpoint }),
  };
}

/** One scheduled invocation of the drift detector. */
export type DriftDetectorRun = (timeMs?: number) => Promise<DriftDetectorResult>;

/** The drift-detector Lambda against the twin, built from its environment as Lambda builds it. */
export function twinDriftDetector(
  state: TwinState,
  options: { drift?: unknown; logger?: Logger; credentials?: TwinCredentials } = {},
): DriftDetectorRun {
  useTwinCredentials(options.credentials ?? credentialsOf(TWIN_IDENTITIES.driftDetector));
  const logger = options.logger ?? functionLogger('drift-detector');
  const handler = createDriftDetector(driftDetectorDeps(driftDetectorEnvironment(state, options.drift), logger));
  return (timeMs = Date.now()) => handler(scheduledEvent(timeMs), lambdaContext('drift-detector'));
}
