import { KubeConflictError, KubeInvalidArgumentError, KubeNotFoundError } from './errors.js';
import { describeRef } from './resources.js';
import type { ClusterClient, KubeObject, Mutation, ObjectRef, UpdateWithRetryOptions } from './types.js';

export const UPDATE_WITH_RETRY_DEFAULTS = { maxAttempts: 5 } as const;

/**
 * Read-modify-write with optimistic concurrency, as client-go's `retry.RetryOnConflict`: GET the object, apply
 * `mutate`, PUT it with the resourceVersion that was read; when someone else wrote in between (409 Conflict),
 * read again and re-apply, up to `maxAttempts` times. No write happens when `mutate` changes nothing.
 * A missing object is `KubeNotFoundError`; the last Conflict is thrown when every attempt lost the race.
 */
export async function updateWithRetry<T extends KubeObject = KubeObject>(
  client: Pick<ClusterClient, 'get' | 'replace'>,
  ref: ObjectRef,
  mutate: Mutation<T>,
  options: UpdateWithRetryOptions = {},
): Promise<T> {
  const maxAttempts = options.maxAttempts ?? UPDATE_WITH_RETRY_DEFAULTS.maxAttempts;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new KubeInvalidArgumentError('maxAttempts', `got ${maxAttempts}`, 'an integer >= 1');
  let lastConflict: KubeConflictError | undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    const live = await client.get<T>(ref);
    if (live === undefined)
      throw new KubeNotFoundError(describeRef(ref), {
        ref,
        verb: 'update',
        serverMessage: 'the object does not exist',
      });
    const before = structuredClone(live);
    const desired = mutate(live) ?? live;
    if (jsonEqual(desired, before)) return before;
    // The version that was read is the precondition of the write (whatever `mutate` did to metadata).
    const next = { ...desired, metadata: { ...desired.metadata, resourceVersion: before.metadata.resourceVersion } };
    try {
      return await client.replace(next);
    } catch (error) {
      if (!(error instanceof KubeConflictError)) throw error;
      lastConflict = error;
    }
  }
  throw lastConflict ?? new KubeConflictError(describeRef(ref), { ref, verb: 'update' });
}

/** Deep equality of JSON values (key order and prototypes ignored: the objects may come from other realms). */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const bKeys = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key) => jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}
