import type { AlertGroup } from './group.js';
import type { AlertMessage } from './message.js';
import type { AlertPublishError } from './pipelineErrors.js';

/** The outcome of one message: SNS's message id, or why it was not accepted. */
export type PublishOutcome = { ok: true; messageId: string } | { ok: false; error: AlertPublishError };

/**
 * The publishing port (the last stage): sends a group of alert messages and reports per message. It does not throw
 * for a failed send; the outcomes say which messages went out, so the pipeline commits exactly those.
 */
export interface AlertPublisher {
  /** Outcomes in the order of `group.items`. */
  publish(group: AlertGroup<AlertMessage>): Promise<PublishOutcome[]>;
}
