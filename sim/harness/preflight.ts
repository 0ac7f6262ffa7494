import type { Logger } from '@aws-lambda-powertools/logger';
import {
  createHandler as createPreflight,
  depsFromEnvironment as preflightDeps,
  type PreflightRunResult,
} from '../../functions/preflight/handler.js';
import type { TwinState } from '../twin/stateFile.js';
import { credentialsOf, TWIN_IDENTITIES } from '../twin/constants.js';
import { functionLogger, lambdaContext } from './lambda.js';
import { type TwinCredentials, twinTarget, useTwinCredentials } from './twinTarget.js';

/**
 * The preflight function on the twin, built exactly as Lambda builds it (`depsFromEnvironment`), from the environment
 * the deployed stack gives it, with the twin's endpoints in place of AWS's.
 */

/** The preflight function's environment on the twin: its one target, its topic and table, settings suited to it. */
export function preflightEnvironment(state: TwinState): Record<string, string> {
  return {
    TARGETS: JSON.stringify([{ ...twinTarget(state), service: state.service }]),
    AMP_WORKSPACE_URL: state.prometheusUrl,
    AWS_REGION: state.region,
    PREFLIGHT_TOPIC_ARN: state.aws.preflightTopicArn,
    HISTORY_TABLE: state.aws.historyTable,
    // The Lambda engine: item 5 passes only while the twin's evaluator runs (its heartbeat, in the alert state table).
    ALERTING_ENGINE: 'lambda',
    ALERT_STATE_TABLE: state.aws.alertStateTable,
    PREFLIGHT_SETTINGS: JSON.stringify(state.preflightSettings),
    EKS_ENDPOINT: state.aws.eksEndpoint,
    SNS_ENDPOINT: state.aws.snsEndpoint,
    DYNAMODB_ENDPOINT: state.aws.dynamodbEndpoint,
  };
}

/** One invocation of the preflight function: `targets` as the on-demand event names them (none: every target). */
export type PreflightRun = (targets?: readonly string[]) => Promise<PreflightRunResult>;

/**
 * The preflight Lambda against the twin; each call is one invocation (the weekly schedule, or an on-demand run). It
 * signs with its own identity, as on AWS (TWIN_IDENTITIES.preflight: its access entry's group, the read-only RBAC);
 * `credentials` replaces it (TWIN_CREDENTIALS: the operator, cluster admin).
 */
export function twinPreflight(
  state: TwinState,
  options: { logger?: Logger; credentials?: TwinCredentials } = {},
): PreflightRun {
  useTwinCredentials(options.credentials ?? credentialsOf(TWIN_IDENTITIES.preflight));
  const logger = options.logger ?? functionLogger('preflight');
  const handler = createPreflight(preflightDeps(preflightEnvironment(state), logger));
  return async (targets = []) => handler({ targets: [...targets] }, lambdaContext('preflight'));
}
