import * as z from 'zod';
import { ConfigInvalidError, REGION, toConfigIssues } from '../../shared/config/index.js';
import { WEBHOOK_SECRET_DEFAULTS } from '../../shared/slack/index.js';

/** The slack-notifier's settings, read once from the Lambda environment. */
export interface SlackNotifierConfig {
  /** Name or ARN of the secret holding the webhook URL. */
  webhookSecretId: string;
  secretsManagerRegion: string;
  /** Set only for the local twin or a VPC endpoint. */
  secretsManagerEndpoint?: string;
  /** How long the webhook URL is reused before the secret is read again. */
  webhookCacheMs: number;
  /** Accept a non-Slack http(s) webhook URL (the twin's sink). Never in a deployed stack. */
  allowInsecureWebhookUrl: boolean;
}

const MAX_CACHE_SECONDS = 86_400;

const environmentSchema = z.object({
  SLACK_WEBHOOK_SECRET_ID: z
    .string({ error: 'is required: the name or ARN of the secret holding the Slack webhook URL' })
    .trim()
    .min(1, { error: 'must not be empty (a secret name or ARN)' }),
  AWS_REGION: z
    .string({ error: 'is required (Lambda sets it): the region of Secrets Manager' })
    .regex(REGION, { error: 'must be an AWS region such as us-east-2' }),
  SECRETS_MANAGER_REGION: z.string().regex(REGION, { error: 'must be an AWS region such as us-east-2' }).optional(),
  SECRETS_MANAGER_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL (the Secrets Manager endpoint override)' })
    .optional(),
  SLACK_WEBHOOK_CACHE_SECONDS: z
    .string()
    .regex(/^\d+$/, { error: `must be an integer from 0 to ${MAX_CACHE_SECONDS} (seconds)` })
    .transform(Number)
    .pipe(z.number().max(MAX_CACHE_SECONDS, { error: `must be an integer from 0 to ${MAX_CACHE_SECONDS} (seconds)` }))
    .optional(),
  SLACK_ALLOW_INSECURE_WEBHOOK_URL: z
    .enum(['true', 'false'], { error: 'must be true or false (true only for the local twin)' })
    .optional(),
});

/**
 * Reads the slack-notifier's configuration from environment variables. Throws `ConfigInvalidError` naming every bad
 * variable at once. An empty variable counts as unset.
 */
export function loadSlackNotifierConfig(env: Readonly<Record<string, string | undefined>>): SlackNotifierConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success) throw new ConfigInvalidError('environment', toConfigIssues('', parsed.error.issues));
  const vars = parsed.data;
  return {
    webhookSecretId: vars.SLACK_WEBHOOK_SECRET_ID,
    secretsManagerRegion: vars.SECRETS_MANAGER_REGION ?? vars.AWS_REGION,
    ...(vars.SECRETS_MANAGER_ENDPOINT === undefined ? {} : { secretsManagerEndpoint: vars.SECRETS_MANAGER_ENDPOINT }),
    webhookCacheMs:
      vars.SLACK_WEBHOOK_CACHE_SECONDS === undefined
        ? WEBHOOK_SECRET_DEFAULTS.ttlMs
        : vars.SLACK_WEBHOOK_CACHE_SECONDS * 1000,
    allowInsecureWebhookUrl: vars.SLACK_ALLOW_INSECURE_WEBHOOK_URL === 'true',
  };
}
