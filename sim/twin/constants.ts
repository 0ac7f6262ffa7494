/** The names and credentials the twin answers to, as the deployed stack and the AWS guide name them. */

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
} as const;
/** The file name under which the twin's Prometheus loads the five alert rules (as infra/prometheus names it). */
export const TWIN_ALERT_RULES_FILE = 'vllm-alerts.rules.yaml';
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
