import { PublishCommand, type MessageAttributeValue, type SNSClient } from '@aws-sdk/client-sns';
import * as z from 'zod';
import type { LocalTaskHandler } from './types.js';

/** The service integration this handler stands in for. */
export const SNS_PUBLISH_RESOURCE = 'arn:aws:states:::sns:publish';

/** The Parameters of an `arn:aws:states:::sns:publish` Task (the SNS Publish API's fields, as Step Functions takes them). */
const publishParametersSchema = z.object({
  TopicArn: z.string({ error: 'is required (the topic to publish to)' }).min(1),
  Message: z.string({ error: 'is required (a string; use States.JsonToString for an object)' }),
  Subject: z.string().optional(),
  MessageAttributes: z
    .record(
      z.string(),
      z.object({ DataType: z.string(), StringValue: z.string().optional(), BinaryValue: z.string().optional() }),
    )
    .optional(),
  MessageGroupId: z.string().optional(),
  MessageDeduplicationId: z.string().optional(),
});

/**
 * The local handler of the direct SNS integration: publishes the state's Parameters with the given SNS client (the
 * twin's endpoint locally), so the same message reaches the same subscribers as on AWS. Returns what Step Functions
 * returns: `{ MessageId }`.
 */
export function snsPublishHandler(sns: SNSClient): LocalTaskHandler {
  return async function snsPublish(input: unknown) {
    const parameters = publishParametersSchema.parse(input);
    const attributes: Record<string, MessageAttributeValue> | undefined = parameters.MessageAttributes
      ? Object.fromEntries(
          Object.entries(parameters.MessageAttributes).map(([name, value]) => [
            name,
            {
              DataType: value.DataType,
              ...(value.StringValue === undefined ? {} : { StringValue: value.StringValue }),
              ...(value.BinaryValue === undefined ? {} : { BinaryValue: Buffer.from(value.BinaryValue, 'base64') }),
            },
          ]),
        )
      : undefined;
    const answer = await sns.send(
      new PublishCommand({
        TopicArn: parameters.TopicArn,
        Message: parameters.Message,
        ...(parameters.Subject === undefined ? {} : { Subject: parameters.Subject }),
        ...(attributes === undefined ? {} : { MessageAttributes: attributes }),
        ...(parameters.MessageGroupId === undefined ? {} : { MessageGroupId: parameters.MessageGroupId }),
        ...(parameters.MessageDeduplicationId === undefined
          ? {}
          : { MessageDeduplicationId: parameters.MessageDeduplicationId }),
      }),
    );
    return { MessageId: answer.MessageId ?? null };
  };
}
