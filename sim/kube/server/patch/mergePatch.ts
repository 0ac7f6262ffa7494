import { isJsonObject, type JsonObject } from './json.js';

/**
 * Applies a JSON merge patch (RFC 7386, section 2 "Processing Merge Patch Documents"): objects merge key by key,
 * `null` removes a key, anything else (arrays included) replaces the target value. Returns a new value.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return structuredClone(patch);
  const result: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}
