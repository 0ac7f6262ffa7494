import { AmpClient, DescribeWorkspaceCommand } from '@aws-sdk/client-amp';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { ClientAmpControlPlane } from '../../shared/alerts/amp/index.js';
import { DynamoDbHeartbeatStore } from '../../shared/alerts/heartbeat/index.js';
import { DynamoDbHistoryStore, type CalibrationHistoryStore } from '../../shared/calibration/history/index.js';
import type { ClusterClient } from '../../shared/kube/index.js';
import { ClusterConnections, KubeClusterClient, lazyClusterClient } from '../../shared/kube/connection/index.js';
import { HttpAlertRulesSource, HttpMetricsSource } from '../../shared/metrics/index.js';
import type { AmpRuleGroupsSource, EvaluatorHeartbeatSource } from '../../shared/preflight/index.js';
import { CliOptionInvalidError, CliOptionRequiredError } from '../errors.js';
import {
  AmpWorkspaceNotFoundError,
  AwsCredentialsMissingError,
  AwsCredentialsUnusableError,
  AwsSsoSessionExpiredError,
} from './errors.js';
import type { AccountEndpoints } from './endpoints.js';

/**
 * The user's own account, reached as the functions reach it: the AWS SDK's default credential chain (environment,
 * AWS_PROFILE, SSO, instance role), AMP over SigV4, EKS through DescribeCluster and a token (or a kubeconfig context
 * when asked), DynamoDB for a deployed stack's tables. Only reads: nothing here writes to the cluster or to AWS.
 */

/** Where the workspace is: its id (`ws-...`, looked up with DescribeWorkspace) or its URL. */
export interface AmpWorkspaceRef {
  /** `ws-<uuid>` or `https://aps-workspaces.<region>.amazonaws.com/workspaces/ws-.../`. */
  workspace: string;
  /** The workspace's region (--amp-region, else the URL's, else --region). */
  region: string;
}

export interface AccountRequest {
  /** The clusters' region (and the stack's). */
  region: string;
  amp?: AmpWorkspaceRef;
  /** Reach the Kubernetes API through this kubeconfig (and context) instead of EKS DescribeCluster and a token. */
  kubeconfig?: { path?: string; context?: string };
  historyTable?: string;
  alertStateTable?: string;
  endpoints: AccountEndpoints;
}

/** What a command reads from the account. */
export interface Account {
  region: string;
  /** The workspace's query URL and region, once resolved (undefined when the request named no workspace). */
  amp: { endpoint: string; region: string; workspaceId: string | undefined } | undefined;
  metrics(): HttpMetricsSource;
  rules(): HttpAlertRulesSource;
  /** The cluster client of a target's cluster (connects on first use). */
  cluster(name: string): ClusterClient;
  /** The deployed stack's calibration history, when --history-table names it. */
  history: CalibrationHistoryStore | undefined;
  /** The evaluator's heartbeat in the deployed stack's alert state table, when --alert-state-table names it. */
  heartbeat: EvaluatorHeartbeatSource | undefined;
  /** AMP's rule groups namespaces of the workspace (the AMP engine's evidence for preflight check 5). */
  ampRuleGroups(): AmpRuleGroupsSource;
  /** The credentials every client signs with (resolved once). */
  credentials: AwsCredentialIdentityProvider;
  close(): void;
}

/** Bounded waits, as the functions have them: a private endpoint fails in seconds, naming itself. */
const REQUEST_HANDLER = { connectionTimeout: 3_000, requestTimeout: 10_000, throwOnRequestTimeout: true };

/**
 * Opens the account: the credentials first (no credentials and an expired SSO session are the first mistakes of a
 * day), then the workspace when one is named. Throws the named errors of ./errors.ts, one line each.
 */
export async function openAccount(request: AccountRequest): Promise<Account> {
  const credentials = await resolveCredentials();
  const clients: Array<{ destroy(): void }> = [];
  const dynamo =
    request.historyTable === undefined && request.alertStateTable === undefined
      ? undefined
      : new DynamoDBClient({
          region: request.region,
          credentials,
          requestHandler: REQUEST_HANDLER,
          ...(request.endpoints.dynamodb === undefined ? {} : { endpoint: request.endpoints.dynamodb }),
        });
  if (dynamo !== undefined) clients.push(dynamo);
  const amp =
    request.amp === undefined ? undefined : await resolveWorkspace(request.amp, request.endpoints, credentials);
  const connections = new ClusterConnections({
    credentials,
    requestHandler: REQUEST_HANDLER,
    ...(request.endpoints.eks === undefined ? {} : { eksEndpoint: request.endpoints.eks }),
  });
  clients.push(connections);
  const kubeConfigClient = request.kubeconfig === undefined ? undefined : kubeconfigClient(request.kubeconfig);
  const needAmp = (): { endpoint: string; region: string; workspaceId: string | undefined } => {
    if (amp === undefined)
      throw new CliOptionRequiredError('--amp-workspace', 'the AMP workspace id (ws-...) or URL of the target');
    return amp;
  };
  return {
    region: request.region,
    amp,
    metrics: () => new HttpMetricsSource({ ...endpointOf(needAmp()), credentials }),
    rules: () => new HttpAlertRulesSource({ ...endpointOf(needAmp()), credentials }),
    cluster: (name) => kubeConfigClient ?? lazyClusterClient(() => connections.get(request.region, name)),
    history:
      dynamo === undefined || request.historyTable === undefined
        ? undefined
        : new DynamoDbHistoryStore({ client: dynamo, tableName: request.historyTable }),
    heartbeat:
      dynamo === undefined || request.alertStateTable === undefined
        ? undefined
        : new DynamoDbHeartbeatStore({ client: dynamo, tableName: request.alertStateTable }),
    ampRuleGroups: () => {
      const workspaceId = needAmp().workspaceId;
      if (workspaceId === undefined)
        throw new CliOptionRequiredError(
          '--amp-workspace',
          'the workspace id (ws-...), or a URL that holds it, for the AMP engine',
        );
      const client = new AmpClient({
        region: needAmp().region,
        credentials,
        requestHandler: REQUEST_HANDLER,
        ...(request.endpoints.ampControlPlane === undefined ? {} : { endpoint: request.endpoints.ampControlPlane }),
      });
      clients.push(client);
      const controlPlane = new ClientAmpControlPlane({ client, workspaceId });
      return {
        describeRuleGroups: async (namespace, signal) =>
          (
            await controlPlane.describe(
              { kind: 'ruleGroupsNamespace', name: namespace },
              signal === undefined ? {} : { signal },
            )
          )?.data,
      };
    },
    credentials,
    close: () => {
      for (const client of clients) client.destroy();
    },
  };
}

function endpointOf(amp: { endpoint: string; region: string }): { endpoint: string; region: string } {
  return { endpoint: amp.endpoint, region: amp.region };
}

/**
 * The default chain's credentials, resolved now and kept: a missing or expired login is reported once, before any
 * request, in words that say what to run.
 */
export async function resolveCredentials(): Promise<AwsCredentialIdentityProvider> {
  // Memoized: refreshed by the chain itself when the credentials near their expiry (an SSO role session, an hour).
  const provider = defaultProvider();
  try {
    await provider();
  } catch (error) {
    throw credentialsError(error);
  }
  return provider;
}

/** The chain's failure as the mistake it is. */
export function credentialsError(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  const profile = process.env.AWS_PROFILE ?? process.env.AWS_DEFAULT_PROFILE ?? 'default';
  if (/\bSSO\b/i.test(message) && /expired|invalid|not found|refresh/i.test(message))
    return new AwsSsoSessionExpiredError(profile, { cause: error });
  if (/Could not load credentials from any providers/i.test(message))
    return new AwsCredentialsMissingError({ cause: error });
  return new AwsCredentialsUnusableError(message.split('\n')[0] ?? message, { cause: error });
}

/** The workspace id in an AMP URL (`.../workspaces/ws-.../`), or undefined. */
const WORKSPACE_IN_URL = /\/workspaces\/(ws-[^/]+)/;

/**
 * A URL is used as given; an id is looked up with DescribeWorkspace in its region, which also tells a workspace in
 * another region (ResourceNotFoundException there) from a wrong id.
 */
async function resolveWorkspace(
  ref: AmpWorkspaceRef,
  endpoints: AccountEndpoints,
  credentials: AwsCredentialIdentityProvider,
): Promise<{ endpoint: string; region: string; workspaceId: string | undefined }> {
  if (/^https?:\/\//.test(ref.workspace))
    return { endpoint: ref.workspace, region: ref.region, workspaceId: WORKSPACE_IN_URL.exec(ref.workspace)?.[1] };
  const client = new AmpClient({
    region: ref.region,
    credentials,
    requestHandler: REQUEST_HANDLER,
    ...(endpoints.ampControlPlane === undefined ? {} : { endpoint: endpoints.ampControlPlane }),
  });
  try {
    const { workspace } = await client.send(new DescribeWorkspaceCommand({ workspaceId: ref.workspace }));
    const endpoint = workspace?.prometheusEndpoint;
    if (endpoint === undefined || endpoint === '')
      throw new AmpWorkspaceNotFoundError(
        ref.workspace,
        ref.region,
        `status ${workspace?.status?.statusCode ?? '?'}, no endpoint`,
      );
    return { endpoint, region: ref.region, workspaceId: ref.workspace };
  } catch (error) {
    if (error instanceof AmpWorkspaceNotFoundError) throw error;
    const e = error as Error;
    // On AWS, another region's endpoint does not know the workspace; a request signed for another region than the
    // endpoint's (an endpoint override) is refused for its scope. Both mean: not in this region.
    if (e.name === 'ResourceNotFoundException' || /scoped to a valid region/i.test(e.message))
      throw new AmpWorkspaceNotFoundError(ref.workspace, ref.region, `${e.name}: ${e.message}`, { cause: error });
    throw error;
  } finally {
    client.destroy();
  }
}

/** A client through the user's kubeconfig (KUBECONFIG or ~/.kube/config, or --kubeconfig) and its context. */
function kubeconfigClient(options: { path?: string; context?: string }): ClusterClient {
  const config = new KubeConfig();
  try {
    if (options.path === undefined) config.loadFromDefault();
    else config.loadFromFile(options.path);
  } catch (error) {
    throw new CliOptionInvalidError(
      '--kubeconfig',
      options.path ?? '(default)',
      `a readable kubeconfig (${(error as Error).message})`,
      {
        cause: error,
      },
    );
  }
  if (options.context !== undefined) {
    const names = config.getContexts().map((c) => c.name);
    if (!names.includes(options.context))
      throw new CliOptionInvalidError(
        '--context',
        options.context,
        `a context of the kubeconfig: ${names.join(', ') || '(none)'}`,
      );
    config.setCurrentContext(options.context);
  }
  if (config.getCurrentCluster() === null)
    throw new CliOptionInvalidError(
      '--kubeconfig',
      options.path ?? '(default)',
      'a kubeconfig with a current context (or give --context)',
    );
  return new KubeClusterClient(config);
}
