/** FNV-1a 64 (prometheus/common model/fnv.go): offset basis and prime. */
const FNV64_OFFSET = 14695981039346656037n;
const FNV64_PRIME = 1099511628211n;
const MASK64 = (1n << 64n) - 1n;
/** prometheus/common `model.SeparatorByte`: cannot occur in UTF-8, so no choice of names and values collides. */
const SEPARATOR = 0xff;

/**
 * The fingerprint Alertmanager gives an alert (its `.Fingerprint` in templates, `fingerprint` in API v2): prometheus/
 * common `LabelSet.Fingerprint()`, FNV-1a 64 over each label name and value in name order (byte-wise, as Go's
 * `sort.Strings`), each followed by 0xff, printed as 16 lower-case hex digits. An alert's labels are its rule's
 * series labels, the rule's `labels` and `alertname`.
 */
export function alertmanagerFingerprint(labels: Readonly<Record<string, string>>): string {
  const names = Object.keys(labels).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  let hash = FNV64_OFFSET;
  const add = (byte: number) => {
    hash = ((hash ^ BigInt(byte)) * FNV64_PRIME) & MASK64;
  };
  for (const name of names) {
    for (const byte of Buffer.from(name, 'utf8')) add(byte);
    add(SEPARATOR);
    for (const byte of Buffer.from(labels[name] ?? '', 'utf8')) add(byte);
    add(SEPARATOR);
  }
  return hash.toString(16).padStart(16, '0');
}
