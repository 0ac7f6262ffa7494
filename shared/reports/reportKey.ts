import { ReportKeyInvalidError } from './errors.js';

/** S3's key limit (bytes of UTF-8). */
const MAX_KEY_BYTES = 1024;

/**
 * Checks a report key for both stores: the same key must be safe as an S3 key and as a path under the local folder,
 * so nothing can climb out of the folder (`..`) or land at the filesystem root (`/`).
 */
export function assertReportKey(key: unknown): asserts key is string {
  if (typeof key !== 'string') throw new ReportKeyInvalidError(String(key), 'is not a string');
  if (key === '') throw new ReportKeyInvalidError(key, 'is empty');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES)
    throw new ReportKeyInvalidError(key, `is ${Buffer.byteLength(key)} bytes long`);
  if (key.startsWith('/')) throw new ReportKeyInvalidError(key, 'starts with "/"');
  if (key.includes('\\')) throw new ReportKeyInvalidError(key, 'contains a backslash');
  if (/[\u0000-\u001f\u007f]/.test(key)) throw new ReportKeyInvalidError(key, 'contains a control character');
  for (const part of key.split('/')) {
    if (part === '') throw new ReportKeyInvalidError(key, 'has an empty part ("//" or a trailing "/")');
    if (part === '..') throw new ReportKeyInvalidError(key, 'has a ".." part');
    if (part === '.') throw new ReportKeyInvalidError(key, 'has a "." part');
  }
}
