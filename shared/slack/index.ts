/** Slack: the alert message as Block Kit, the webhook client, and the webhook URL from Secrets Manager. */
export { SlackWebhookClient, type SlackPostResult } from './SlackWebhookClient.js';
export { slackMessageFor } from './blockKit.js';
export { SlackError } from './errors.js';
export { WEBHOOK_SECRET_DEFAULTS, WebhookUrlProvider } from './webhookSecret.js';
