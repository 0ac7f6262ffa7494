// face (generated)
export * from './SlackWebhookClient.js';
export * from './blockKit.js';
export * from './errors.js';
export * from './redact.js';
export * from './webhookSecret.js';
