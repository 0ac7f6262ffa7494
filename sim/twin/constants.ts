/** The names and credentials the twin answers to, as the deployed stack and the AWS guide name them. */
import { RBAC_GROUPS } from '../../shared/kube/manifests/index.js';

/** The region the twin pretends to be in (the AWS guide's). */
export const TWIN_REGION = 'us-east-2';
/** The names the deployed stack gives its topics and tables (serverless.yml). */
export const TWIN_RESOURCES = {
  calibrationTopic: 'vllm-eks-pilot-calibration',
  historyTable: 'vllm-eks-pilot-calibration-history',
  alertTopic: 'vllm-eks-pilot-alerts',
  alertStateTable: 'vllm-eks-pilot-alert-state',
  alertSilencesTable: 'vllm-eks-pilot-alert-silences',
  slackWebhookSecret: 'vllm-eks-pilot/slack-webhook',
  /** Where the preflight function publishes its summary when a check fails. */
  preflightTopic: 'vllm-eks-pilot-preflight',
  /** Where the CloudWatch alarms on the product itself publish (infra/serverless/alarms.ts). */
  operationsTopic: 'vllm-eks-pilot-operations',
  /** The evaluator heartbeat alarm (infra/serverless/alarms.ts names it `<service>-<stage>-evaluator-heartbeat`). */
  heartbeatAlarm: 'vllm-eks-pilot-evaluator-heartbeat',
  /** The AMP engine's rule groups namespace (the stack names it `<service>-<stage>`: ampRuleNamespaceName). */
  ampRuleNamespace: 'vllm-eks-pilot-twin',
  /** The calibration state machine behind the twin's Step Functions API (served once sim/harness wires it). */
  calibrationStateMachine: 'vllm-eks-pilot-twin-calibration',
} as const;
/**
 * The twin's heartbeat alarm, time-compressed like the twin (CloudWatch's high-resolution period, 10 s), and how often
 * its CloudWatch evaluates alarms: stopping the evaluator turns the alarm to ALARM within about 30-40 s.
 */
export const TWIN_HEARTBEAT_ALARM_PERIOD_SECONDS = 10;
export const TWIN_ALARM_EVALUATION_INTERVAL_MS = 5_000;
/** The file name under which the twin's Prometheus loads the five alert rules (as infra/prometheus names it). */
export const TWIN_ALERT_RULES_FILE = 'vllm-alerts.rules.yaml';
/**
 * The twin's AMP workspace: its control plane (sim/aws/amp.ts) answers for this id only. A `ws-<uuid>` as AWS makes
 * them, so the product's checks of a workspace id accept it.
 */
export const TWIN_AMP_WORKSPACE_ID = 'ws-a3f10000-7e1a-4000-8000-000000000001';
/** The EKS cluster name the twin pretends to be (the AWS guide's). */
export const TWIN_CLUSTER = 'ai-eks-docs';
/**
 * Credentials for the twin's endpoints. The product signs every request (one code path); the twin accepts any
 * signature. These are not secrets and must never be real keys (the key id has the length of a real one, because
 * the twin's API server checks EKS tokens the way aws-iam-authenticator does).
 */
export const TWIN_CREDENTIALS = {
  accessKeyId: 'AKIATWINLOCAL0000000',
  secretAccessKey: 'twin-local-not-a-secret',
} as const;

/** The account in the ARNs of the twin's IAM roles: the one its EKS tokens report (sim/kube/server/eksToken.ts). */
export const TWIN_ACCOUNT = '000000000000';

/** One IAM identity the twin hands out: its throwaway keys, its role, and that role's EKS access entry. */
export interface TwinIdentity {
  accessKeyId: string;
  secretAccessKey: string;
  /** The role the keys are a session of (the twin's IAM answers for them as STS would). */
  roleArn: string;
  /** The access entry's `kubernetesGroups`, as the deployed stack's docs map each function's role. */
  kubernetesGroups: readonly string[];
  /** The cluster creator's entry: AmazonEKSClusterAdminPolicy, RBAC not consulted. */
  clusterAdmin: boolean;
}

const twinRole = (name: string) => `arn:aws:iam::${TWIN_ACCOUNT}:role/vllm-eks-pilot-twin-${name}`;

/**
 * The identities of the twin's EKS access entries. `operator` holds TWIN_CREDENTIALS, the cluster creator's admin
 * entry (the twin's own set-up, kubectl users, the tests' world changes). The preflight and drift-detector harnesses
 * sign with their function's identity by default; the calibration's is opt-in (its RBAC names only the profile's
 * namespace, and tests of other namespaces expect a 404, not a 403). The API server allows each exactly what the
 * product's generated RBAC (shared/kube/manifests/controlPlaneRbac.ts, applied at start-up) grants its group.
 */
export const TWIN_IDENTITIES = {
  operator: {
    ...TWIN_CREDENTIALS,
    roleArn: twinRole('operator'),
    kubernetesGroups: [],
    clusterAdmin: true,
  },
  preflight: {
    accessKeyId: 'AKIATWINPREFLIGHT000',
    secretAccessKey: 'twin-local-not-a-secret',
    roleArn: twinRole('preflight'),
    kubernetesGroups: [RBAC_GROUPS.read],
    clusterAdmin: false,
  },
  driftDetector: {
    accessKeyId: 'AKIATWINDRIFTDETECT0',
    secretAccessKey: 'twin-local-not-a-secret',
    roleArn: twinRole('drift-detector'),
    kubernetesGroups: [RBAC_GROUPS.read],
    clusterAdmin: false,
  },
  calibration: {
    accessKeyId: 'AKIATWINCALIBRATION0',
    secretAccessKey: 'twin-local-not-a-secret',
    roleArn: twinRole('calibration'),
    kubernetesGroups: [RBAC_GROUPS.calibration],
    clusterAdmin: false,
  },
} as const satisfies Record<string, TwinIdentity>;

/** The keys of an identity, as the AWS SDK takes them. */
export function credentialsOf(identity: TwinIdentity): { accessKeyId: string; secretAccessKey: string } {
  return { accessKeyId: identity.accessKeyId, secretAccessKey: identity.secretAccessKey };
}
