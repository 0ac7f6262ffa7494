import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { AmpAlertingResource } from './AmpAlertingControlPlane.js';

/**
 * Whether AMP holds the desired data: the same text, or the same YAML once parsed (comments, quoting and key order
 * aside), so a byte AMP normalises or a comment that changed never costs a Put and an UPDATING cycle. The
 * Alertmanager definition's `alertmanager_config` is itself a YAML string and is compared parsed too.
 */
export function sameAmpData(resource: AmpAlertingResource, held: string, desired: string): boolean {
  if (held === desired) return true;
  const a = parsed(resource, held);
  const b = parsed(resource, desired);
  return a !== UNPARSABLE && b !== UNPARSABLE && isDeepStrictEqual(a, b);
}

const UNPARSABLE = Symbol('unparsable');

function parsed(resource: AmpAlertingResource, text: string): unknown {
  try {
    const value = parseYaml(text) as unknown;
    if (resource.kind !== 'alertManagerDefinition' || value === null || typeof value !== 'object') return value;
    const config = (value as Record<string, unknown>).alertmanager_config;
    return typeof config === 'string' ? { ...value, alertmanager_config: parseYaml(config) as unknown } : value;
  } catch {
    // Text that is not YAML equals only itself (checked first).
    return UNPARSABLE;
  }
}
