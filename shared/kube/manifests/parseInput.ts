import type * as z from 'zod';
import { formatPath } from '../../config/index.js';
import { KubeManifestInputError } from '../errors.js';

/**
 * Parses a generator's input with its zod schema; throws `KubeManifestInputError` whose issues name each bad field
 * the way a user writes it (`tolerations[0].effect`). `manifest` names the input in the message.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, manifest: string): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  throw new KubeManifestInputError(
    manifest,
    result.error.issues.map((issue) => ({ path: formatPath('', issue.path), message: issue.message })),
  );
}
