/** The alphabet of Kubernetes' `rand.SafeEncodeString` (no vowels, no look-alike characters). */
const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The `pod-template-hash` of a Deployment's Pod template, computed as Kubernetes' `controller.ComputeHash` does:
 * FNV-32a over the template (plus the collision count when there is one), printed as a decimal number and encoded
 * with SafeEncodeString, so it reads like a real one (`5d7b9c8f6`). Kubernetes hashes a Go dump of the object; here
 * the template is canonical JSON (keys sorted), which is just as stable: the same template always gives the same hash.
 */
export function podTemplateHash(template: unknown, collisionCount?: number): string {
  let hash = fnv32a(canonicalJson(template));
  if (collisionCount !== undefined && collisionCount > 0) hash = fnv32a(String(collisionCount), hash);
  return safeEncode(String(hash));
}

/** `rand.SafeEncodeString`: each byte mapped into the safe alphabet. */
function safeEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += SAFE_ALPHANUMS[text.charCodeAt(i) % SAFE_ALPHANUMS.length];
  return out;
}

/** FNV-1a, 32 bit (http://www.isthe.com/chongo/tech/comp/fnv/), continuing from `seed`. */
function fnv32a(text: string, seed = 0x811c9dc5): number {
  let hash = seed;
  const bytes = Buffer.from(text, 'utf8');
  for (const byte of bytes) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** JSON with object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
