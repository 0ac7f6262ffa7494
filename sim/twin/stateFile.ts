import { readFile, rename, writeFile } from 'node:fs/promises';
import * as z from 'zod';
import { TwinStateFileError } from './errors.js';

/**
 * The twin's state file: written by `vllm-pilot twin up` once everything is ready, read by every command that talks
 * to the twin (`--state-file`). It holds URLs only: the twin's AWS endpoints accept any credentials.
 */
export const twinStateSchema = z.strictObject({
  version: z.literal(2),
  profile: z.string(),
  /** PID of the `twin up` process, so a stale file can be recognised. */
  pid: z.number().int(),
  startedAt: z.string(),
  clusterName: z.string(),
  region: z.string(),
  namespace: z.string(),
  deployment: z.string(),
  /** The vLLM Service in front of the Deployment. */
  service: z.string(),
  model: z.string(),
  vllmVersion: z.string(),
  prometheusUrl: z.string().url(),
  /** The twin's Kubernetes API server (https: kubectl sends tokens only over TLS; the certificate is self-signed). */
  kubeApiUrl: z.string().url(),
  /** A kubeconfig with an admin token, for kubectl and the CLI; and one whose token may only read. */
  kubeconfigPath: z.string(),
  readOnlyKubeconfigPath: z.string(),
  /** The vLLM Service's address on this machine: what a client in the cluster reaches as the Service. */
  serviceUrl: z.string().url(),
  /** The twin's control endpoint (faults: `GET|POST|DELETE /faults`), for `vllm-pilot twin fault`. */
  controlUrl: z.string().url(),
  replicas: z.array(
    z.strictObject({
      name: z.string(),
      node: z.string(),
      gpuUuid: z.string(),
      url: z.string().url(),
      metricsUrl: z.string().url(),
      dcgmMetricsUrl: z.string().url(),
      cadvisorMetricsUrl: z.string().url(),
    }),
  ),
  aws: z.strictObject({
    region: z.string(),
    cloudwatchEndpoint: z.string().url(),
    /** The twin's EKS endpoint (DescribeCluster), for the product's EKS connection. */
    eksEndpoint: z.string().url(),
    snsEndpoint: z.string().url(),
    dynamodbEndpoint: z.string().url(),
    /** The topic the calibration notifies, and the table its history goes to (as the deployed stack names them). */
    calibrationTopicArn: z.string(),
    historyTable: z.string(),
    /** The alerts topic (severity etc. as message attributes) and the alert state table, as the stack names them. */
    alertTopicArn: z.string(),
    alertStateTable: z.string(),
    /** The alert silences table (a calibration's while it holds the target, people's). Older state files lack it. */
    alertSilencesTable: z.string().optional(),
    /** Secrets Manager, holding the Slack webhook URL (the twin's Slack sink) under `slackWebhookSecretId`. */
    secretsManagerEndpoint: z.string().url(),
    slackWebhookSecretId: z.string(),
    /** The topic the preflight function publishes its summary to when a check fails. */
    preflightTopicArn: z.string(),
    /**
     * AMP's control plane (`AmpClient({ endpoint })`: rule groups namespaces, the alert manager definition) and the
     * workspace it answers for. Older state files lack them.
     */
    ampControlPlaneEndpoint: z.string().url().optional(),
    ampWorkspaceId: z.string().optional(),
    /** The operations topic the CloudWatch alarms publish to (the heartbeat alarm's). Older state files lack it. */
    operationsTopicArn: z.string().optional(),
    /**
     * Step Functions (StartExecution, DescribeExecution, ListExecutions) and the calibration state machine it runs,
     * for the product's @aws-sdk/client-sfn calls (drift re-calibration). Older state files lack them.
     */
    stepFunctionsEndpoint: z.string().url().optional(),
    calibrationStateMachineArn: z.string().optional(),
  }),
  /**
   * PREFLIGHT_SETTINGS suited to this twin (its scrape interval, its Pods' warmup); what a stack deployed next to such
   * a cluster would set. Passed through to the preflight function, which checks it.
   */
  preflightSettings: z.record(z.string(), z.unknown()),
});

export type TwinState = z.infer<typeof twinStateSchema>;

/** Writes the state file atomically, so a reader never sees half a file. */
export async function writeTwinState(path: string, state: TwinState): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, path);
}

/** Reads and validates a state file; the error says what to do when it is missing, invalid or stale. */
export async function readTwinState(path: string): Promise<TwinState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new TwinStateFileError(
      path,
      `cannot read it (${(cause as NodeJS.ErrnoException).code ?? 'error'}); start the twin with \`vllm-pilot twin up --state-file ${path}\``,
      { cause },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new TwinStateFileError(path, 'it is not JSON', { cause });
  }
  const parsed = twinStateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TwinStateFileError(path, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  if (!isAlive(parsed.data.pid))
    throw new TwinStateFileError(path, `the twin that wrote it (pid ${parsed.data.pid}) is no longer running`);
  return parsed.data;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
