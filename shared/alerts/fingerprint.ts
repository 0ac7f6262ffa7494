import { createHash } from 'node:crypto';

/** Hex characters kept of the SHA-256: 128 bits, far beyond any collision risk for one target's alerts. */
const FINGERPRINT_LENGTH = 32;

/**
 * The stable id of one alert instance: SHA-256 (hex, first 32 characters) of the target, the alert name and the
 * instance's identifying labels sorted by name. Labels outside `identifyingLabels` (a value, a scrape's `instance`)
 * do not change it, so the same Pod, GPU or model keeps its fingerprint from one evaluation to the next; an
 * identifying label the series lacks is left out.
 */
export function alertFingerprint(
  target: string,
  alertname: string,
  labels: Readonly<Record<string, string>>,
  identifyingLabels: readonly string[],
): string {
  const identity = [...new Set(identifyingLabels)]
    .filter((name) => labels[name] !== undefined && labels[name] !== '')
    .sort()
    .map((name) => [name, labels[name]]);
  // JSON keeps the parts apart: no choice of values can make two different identities serialise the same.
  return createHash('sha256')
    .update(JSON.stringify([target, alertname, identity]))
    .digest('hex')
    .slice(0, FINGERPRINT_LENGTH);
}
