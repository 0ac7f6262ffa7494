import type { ConfigIssue } from './errors.js';

/**
 * The fields a target may carry, per consumer: the stack takes one `targets` list and gives each function only the
 * fields its strict parser accepts (a typo fails loudly); the CLI reads the same list from a file the same way.
 */

/** The fields every consumer reads (shared/config/targets.ts). */
export const COMMON_TARGET_FIELDS = ['name', 'cluster', 'namespace', 'deployment', 'model', 'clusterLabel'] as const;

/** The fields each function's parser accepts. */
export const TARGET_FIELDS = {
  metricsCollector: COMMON_TARGET_FIELDS,
  alertEvaluator: [...COMMON_TARGET_FIELDS, 'alerts'],
  preflight: [...COMMON_TARGET_FIELDS, 'service', 'scaledObject', 'alerts'],
  driftDetector: [...COMMON_TARGET_FIELDS, 'drift'],
} as const;

/** Every field some consumer reads: a key outside it is a typo. */
export const KNOWN_TARGET_FIELDS: ReadonlySet<string> = new Set(Object.values(TARGET_FIELDS).flat());

/** A `targets[i].key: is not a target field` issue for every key no consumer reads (a typo such as `namspace`). */
export function unknownTargetFields(entries: readonly unknown[]): ConfigIssue[] {
  return entries.flatMap((entry, index) =>
    entry !== null && typeof entry === 'object' && !Array.isArray(entry)
      ? Object.keys(entry)
          .filter((key) => !KNOWN_TARGET_FIELDS.has(key))
          .map((key) => ({
            path: `targets[${index}].${key}`,
            message: `is not a target field; accepted: ${[...KNOWN_TARGET_FIELDS].join(', ')}`,
          }))
      : [],
  );
}

/** The list with each entry cut down to `fields` (entries that are not objects are left for the parser to refuse). */
export function targetView(entries: readonly unknown[], fields: readonly string[]): unknown[] {
  return entries.map((entry) =>
    entry !== null && typeof entry === 'object' && !Array.isArray(entry)
      ? Object.fromEntries(Object.entries(entry).filter(([key]) => fields.includes(key)))
      : entry,
  );
}
