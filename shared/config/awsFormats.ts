import * as z from 'zod';

/**
 * The formats of the AWS names and URLs the functions' environments carry, once for every function's config (and the
 * stack's parameters), so a bad value is refused the same way, naming the variable, wherever it appears.
 */

/** An AWS region name inside a larger pattern (an ARN): `us-east-2`, `ap-northeast-1`, `us-gov-west-1`. */
export const REGION_PATTERN = '[a-z]{2}(?:-[a-z]+)+-\\d+';
/** An AWS region name. */
export const REGION = new RegExp(`^${REGION_PATTERN}$`);
/** SNS topic ARN (partition aws, aws-cn, aws-us-gov); topic names are 1-256 of [A-Za-z0-9_-]. */
export const TOPIC_ARN = new RegExp(`^arn:aws[a-z-]*:sns:${REGION_PATTERN}:\\d{12}:[A-Za-z0-9_-]{1,256}$`);
/** A Step Functions state machine ARN; names are 1-80 of [A-Za-z0-9_-]. */
export const STATE_MACHINE_ARN = new RegExp(
  `^arn:aws[a-z-]*:states:${REGION_PATTERN}:\\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$`,
);
/** DynamoDB table names: 3-255 of [a-zA-Z0-9_.-] (DynamoDB naming rules). */
export const TABLE_NAME = /^[a-zA-Z0-9_.-]{3,255}$/;

/** An http(s) URL (an endpoint override or the AMP workspace URL); `what` says which in the error. */
export const httpUrl = (what: string) => z.url({ protocol: /^https?$/, error: `must be an http(s) URL (${what})` });

/** A required AWS region. */
export const region = (what: string) =>
  z.string({ error: `is required: ${what}` }).regex(REGION, { error: 'must be an AWS region such as us-east-2' });
