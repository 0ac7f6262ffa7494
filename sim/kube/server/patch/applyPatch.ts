import { parse as parseYaml } from 'yaml';
import { KubeApiBadRequestError, KubeApiUnsupportedMediaTypeError } from '../../errors.js';
import { applyJsonPatch, parseJsonPatch } from './jsonPatch.js';
import { applyMergePatch } from './mergePatch.js';
import { applyStrategicMergePatch, type ListStrategyLookup } from './strategicMergePatch.js';

/** The PATCH content types of the Kubernetes API. */
export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = keyof typeof PATCH_TYPES;

/**
 * The patch type of a request's Content-Type. Custom resources take no strategic merge patch (they have no Go struct
 * tags), so that is 415 for them, as on a real server.
 */
export function patchTypeOf(contentType: string | undefined, customResource: boolean): PatchType {
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const accepted = (Object.keys(PATCH_TYPES) as PatchType[]).filter((t) => !(customResource && t === 'strategic'));
  const found = accepted.find((t) => PATCH_TYPES[t] === media);
  if (!found) {
    throw new KubeApiUnsupportedMediaTypeError(
      media,
      accepted.map((t) => PATCH_TYPES[t]),
    );
  }
  return found;
}

/** Decodes a patch body: JSON for the three patch types, YAML (a superset of JSON) for server-side apply. */
export function parsePatchBody(type: PatchType, body: string): unknown {
  try {
    return type === 'apply' ? (parseYaml(body) as unknown) : (JSON.parse(body) as unknown);
  } catch (error) {
    const what = type === 'apply' ? 'YAML' : 'JSON';
    throw new KubeApiBadRequestError(
      `error decoding patch: the ${PATCH_TYPES[type]} body is not valid ${what}: ${(error as Error).message}`,
    );
  }
}

/**
 * Applies a decoded patch of `type` to `target` and returns the patched value (a new value; `target` is untouched).
 * `lists` gives the list merge strategies for strategic merge and server-side apply. Server-side apply is simplified:
 * the applied configuration is merged like a strategic merge patch (lists by their merge keys), without managedFields
 * ownership, so a field a manager stops applying is kept rather than removed, and there are no apply conflicts.
 */
export function applyPatch(target: unknown, type: PatchType, patch: unknown, lists: ListStrategyLookup): unknown {
  switch (type) {
    case 'json':
      return applyJsonPatch(target, parseJsonPatch(patch));
    case 'merge':
      return applyMergePatch(target, patch);
    case 'strategic':
    case 'apply':
      return applyStrategicMergePatch(target, patch, lists);
  }
}
