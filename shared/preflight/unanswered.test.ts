import { describe, expect, it } from '@jest/globals';
import { KubeClusterLookupError, KubeForbiddenError } from '../kube/index.js';
import { toKubeError } from '../kube/connection/index.js';
import { MetricsAbortedError, MetricsNetworkError, MetricsTimeoutError } from '../metrics/index.js';
import { EndpointUnansweredError } from '../network/index.js';
import { unansweredOutcome } from './unanswered.js';

/** What @smithy/node-http-handler rejects with when no connection is made in time (its own words). */
const sdkConnectTimeout = () =>
  Object.assign(
    new Error(
      '@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 3000 ms.',
    ),
    { name: 'TimeoutError', $metadata: { attempts: 3 } },
  );

/** What node-fetch (under client-node) rejects with when the connect timeout of the kube agent fires. */
const fetchConnectTimeout = (url: string) =>
  Object.assign(
    new Error(`request to ${url} failed, reason: connect ETIMEDOUT 10.0.1.5:443: no connection within 5000 ms`),
    { name: 'FetchError', type: 'system', code: 'ETIMEDOUT', errno: 'ETIMEDOUT' },
  );

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });

const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'llm', name: 'ministral' };

describe('Function: unansweredOutcome', () => {
  it.each([
    {
      // connectToEks: DescribeCluster through a client that names the host (nameEndpointOnNoAnswer)
      case: 'the EKS API, from a function in a VPC without the eks endpoint',
      error: new KubeClusterLookupError(
        'ai-eks',
        'eks:DescribeCluster failed',
        true,
        new EndpointUnansweredError('eks.eu-west-1.amazonaws.com', 'timeout', 10_000, { cause: sdkConnectTimeout() }),
      ),
      reason:
        'eks.eu-west-1.amazonaws.com did not answer within 10 s: a function in a VPC without internet access needs ' +
        'the interface endpoint com.amazonaws.eu-west-1.eks (docs/deploy.md#private-clusters)',
    },
    {
      case: 'DynamoDB, a gateway endpoint',
      error: new EndpointUnansweredError('dynamodb.eu-west-1.amazonaws.com', 'timeout', 9_250),
      reason:
        'dynamodb.eu-west-1.amazonaws.com did not answer within 9.3 s: a function in a VPC without internet access ' +
        'needs the gateway endpoint com.amazonaws.eu-west-1.dynamodb (docs/deploy.md#private-clusters)',
    },
    {
      // shared/metrics: the per-attempt timeout, with the URL asked
      case: 'AMP queries',
      error: new MetricsTimeoutError(10_000, {
        url: 'https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-1/api/v1/query',
        cause: new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      }),
      reason:
        'aps-workspaces.eu-west-1.amazonaws.com did not answer within 10 s: a function in a VPC without internet ' +
        'access needs the interface endpoint com.amazonaws.eu-west-1.aps-workspaces (docs/deploy.md#private-clusters)',
    },
    {
      // KubeClusterClient: the cluster security group drops the function's SYN
      case: "the cluster's API endpoint",
      error: toKubeError(
        fetchConnectTimeout(
          'https://ABCD1234.gr7.eu-west-1.eks.amazonaws.com/apis/apps/v1/namespaces/llm/deployments/ministral',
        ),
        'get',
        DEPLOYMENT,
      ),
      reason:
        "the cluster's API endpoint (abcd1234.gr7.eu-west-1.eks.amazonaws.com) did not answer within 5 s: allow 443 " +
        "from the functions' security group in the cluster security group (docs/deploy.md#private-clusters)",
    },
    {
      case: 'a refused connection to an endpoint override (the twin, a proxy)',
      error: new MetricsNetworkError('http://127.0.0.1:9/workspaces/ws-1/api/v1/query', {
        cause: Object.assign(new TypeError('fetch failed'), { cause: refused() }),
      }),
      reason:
        '127.0.0.1:9 refused the connection: check that the endpoint is right and that the function can reach it ' +
        '(its VPC, security groups and routes)',
    },
    {
      case: 'a timeout that names no host and no wait (the check measured 2 s)',
      error: sdkConnectTimeout(),
      elapsedMs: 2_000,
      reason:
        'an endpoint did not answer within 3 s: check that the endpoint is right and that the function can reach it ' +
        '(its VPC, security groups and routes)',
    },
  ])('names $case', ({ error, elapsedMs, reason }) => {
    // Act
    const outcome = unansweredOutcome(error, elapsedMs);

    // Assess: one line, the fix both in it and apart
    expect(outcome?.reason).toBe(reason);
    expect(outcome?.reason).not.toContain('\n');
    expect(reason.endsWith(outcome?.fix ?? '(none)')).toBe(true);
  });

  it.each([
    {
      case: 'an answer refusing access (the endpoint is reachable)',
      error: Object.assign(new Error('not authorized'), {
        name: 'AccessDeniedException',
        $metadata: { httpStatusCode: 403 },
      }),
    },
    {
      case: 'a Kubernetes 403',
      error: new KubeForbiddenError('Deployment llm/ministral', { status: 403, verb: 'get', ref: DEPLOYMENT }),
    },
    {
      // The deadline guard aborted the query: the caller stopped waiting, nothing is missing.
      case: 'an abort by the deadline guard, whatever its cause',
      error: new MetricsAbortedError({ cause: new DOMException('timed out', 'TimeoutError') }),
    },
    { case: 'a plain error', error: new Error('boom') },
  ])('says nothing of $case', ({ error }) => {
    expect(unansweredOutcome(error, 1_000)).toBeUndefined();
  });
});
