import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type EksTwin, startEksTwin } from '../sim/harness/index.js';
import { depsFromEnvironment } from '../functions/preflight/handler.js';
import { CapturingLogger } from '../functions/shared/testing.js';
import type { PreflightReport, PreflightTarget } from '../shared/preflight/index.js';
import { startSilentServer } from './helpers/silentServer.js';

// A private cluster seen from a function whose network path is missing a piece: an endpoint that takes the
// connection and never says a word (what a VPC without the eks endpoint, or a cluster security group without the
// 443 rule, looks like from inside: nothing comes back). Preflight runs with its real adapters, built from its
// environment as in Lambda; each check that needed the silent endpoint must fail in seconds, naming it.

const REGION = 'eu-west-1';
const target: PreflightTarget = {
  name: 'prod',
  cluster: 'private',
  namespace: 'llm',
  deployment: 'ministral',
  model: 'mistralai/Ministral-8B-Instruct-2410',
};

/** Preflight's environment; nothing listens on port 9, so AMP and DynamoDB refuse at once. */
function environment(eksEndpoint: string): Record<string, string> {
  return {
    TARGETS: JSON.stringify([target]),
    AMP_WORKSPACE_URL: 'http://127.0.0.1:9/workspaces/ws-1234/',
    AWS_REGION: REGION,
    PREFLIGHT_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:vllm-eks-pilot-preflight',
    HISTORY_TABLE: 'vllm-eks-pilot-calibration-history',
    ALERTING_ENGINE: 'lambda',
    ALERT_STATE_TABLE: 'vllm-eks-pilot-alert-state',
    EKS_ENDPOINT: eksEndpoint,
    SNS_ENDPOINT: 'http://127.0.0.1:9',
    DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
  };
}

/** Runs the eleven checks of `target` as the function does; returns the report and how long it took. */
async function runChecks(eksEndpoint: string): Promise<{ report: PreflightReport; ms: number }> {
  const deps = depsFromEnvironment(environment(eksEndpoint), new CapturingLogger({ serviceName: 'preflight' }));
  const started = performance.now();
  const report = await deps.check(target, new AbortController().signal);
  return { report, ms: performance.now() - started };
}

describe('Preflight against a private cluster it cannot reach', () => {
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let eks: EksTwin;
  const savedCredentials = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  beforeAll(async () => {
    // The clients sign with the default credential chain, as in Lambda.
    process.env.AWS_ACCESS_KEY_ID = 'AKIDPRIVATECLUSTER00';
    process.env.AWS_SECRET_ACCESS_KEY = 'private-cluster-test-not-a-secret';
    silent = await startSilentServer();
    // DescribeCluster answers; the cluster's API endpoint it names is the silent server, over https.
    eks = await startEksTwin({
      clusters: [{ name: 'private', endpoint: `https://127.0.0.1:${silent.port}`, region: REGION }],
    });
  });

  afterAll(async () => {
    await Promise.all([silent.stop(), eks.stop()]);
    process.env.AWS_ACCESS_KEY_ID = savedCredentials.id;
    process.env.AWS_SECRET_ACCESS_KEY = savedCredentials.secret;
    if (savedCredentials.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    if (savedCredentials.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
  });

  it('names the EKS endpoint that never answered DescribeCluster, and how long it waited', async () => {
    // Act: EKS_ENDPOINT is the silent server (a VPC without the eks interface endpoint)
    const { report, ms } = await runChecks(`http://127.0.0.1:${silent.port}`);

    // Assess: the checks that needed the cluster fail naming the endpoint; the wait is bounded by the clients'
    // timeouts (3 attempts of 10 s), far below Lambda's 120 s: generous bound for a busy machine.
    const reasons = report.results.map((r) => r.reason);
    const named = reasons.filter((r) => r.includes(`127.0.0.1:${silent.port} did not answer within`));
    expect(named.length).toBeGreaterThan(0);
    expect(named[0]).toMatch(
      new RegExp(`^could not check: 127\\.0\\.0\\.1:${silent.port} did not answer within \\d+(\\.\\d)? s: check that`),
    );
    expect(report.results.find((r) => r.reason === named[0])?.fix).toMatch(/check that the endpoint is right/);
    expect(ms).toBeLessThan(100_000);
  }, 150_000);

  it("names the cluster's API endpoint when it takes the connection and never completes TLS", async () => {
    // Act: DescribeCluster answers (the twin); the API server endpoint it returns is the silent server
    const { report, ms } = await runChecks(eks.endpoint);

    // Assess: the kube client gives up on the connection after its 5 s connect timeout, and says what to allow.
    const reasons = report.results.map((r) => r.reason);
    expect(reasons).toContain(
      `could not check: the cluster's API endpoint (127.0.0.1:${silent.port}) did not answer within 5 s: allow 443 ` +
        "from the functions' security group in the cluster security group (docs/deploy.md#private-clusters)",
    );
    expect(ms).toBeLessThan(60_000);
  }, 120_000);
});
