import { isDeepStrictEqual } from 'node:util';

/** A JSON object (what JSON.parse gives for `{...}`). */
export type JsonObject = Record<string, unknown>;

/** Whether `value` is a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep equality of two JSON values (as RFC 6902 `test` compares them). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}

/** A JSON value as text for a message or a cell: strings as they are, anything else as JSON. */
export function jsonText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? 'undefined';
}
