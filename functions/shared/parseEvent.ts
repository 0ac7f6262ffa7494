import * as z from 'zod';
import { formatPath } from '../../shared/config/index.js';

/**
 * Parses an invocation event with `schema`; when it does not fit, throws the function's own named error built from
 * one line per problem (`event.Records[0].Sns.Message: must be a string`), so every function reports a bad event
 * the same way.
 */
export function parseEvent<S extends z.ZodType>(
  schema: S,
  event: unknown,
  invalid: (issues: string[]) => Error,
): z.output<S> {
  const parsed = schema.safeParse(event);
  if (parsed.success) return parsed.data;
  throw invalid(parsed.error.issues.map((issue) => `${formatPath('event', issue.path)}: ${issue.message}`));
}

/** An EventBridge scheduled event: only `time` matters; the other fields (which may change) pass through unchecked. */
export const scheduledEventSchema = z.looseObject({
  time: z.iso.datetime({ offset: true, error: 'must be an ISO-8601 date-time (EventBridge sets it)' }),
});
