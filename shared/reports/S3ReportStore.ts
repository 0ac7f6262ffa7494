import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ReportStoreUnavailableError, ReportWriteError } from './errors.js';
import { assertReportKey } from './reportKey.js';
import type { ReportStore } from './types.js';

export interface S3ReportStoreOptions {
  /** An S3 client for the bucket's region (tests: a local endpoint with forcePathStyle). */
  client: S3Client;
  bucket: string;
}

/** S3's error codes that a later retry can clear. */
const TRANSIENT_CODES = new Set([
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'RequestTimeout',
  'ThrottlingException',
  'TimeoutError',
]);
const NETWORK_ERROR = /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EAI_AGAIN)\b/;

/** Bucket names as S3 accepts them (general purpose buckets). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Reports in S3: PutObject with SSE-S3 (`AES256`); the location is `s3://<bucket>/<key>`. */
export class S3ReportStore implements ReportStore {
  readonly #client: S3Client;
  readonly bucket: string;

  constructor(options: S3ReportStoreOptions) {
    if (!BUCKET.test(options.bucket))
      throw new ReportWriteError(
        `s3://${options.bucket}`,
        `${JSON.stringify(options.bucket)} is not a bucket name; accepted: 3 to 63 lowercase letters, digits, "." and "-"`,
      );
    this.#client = options.client;
    this.bucket = options.bucket;
  }

  /** Uploads the report; S3 keeps it encrypted at rest with S3-managed keys. */
  async put(key: string, body: string, contentType: string): Promise<{ location: string }> {
    assertReportKey(key);
    const location = `s3://${this.bucket}/${key}`;
    try {
      await this.#client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ContentType: contentType,
          ServerSideEncryption: 'AES256',
        }),
      );
    } catch (error) {
      const e = error as { name?: string; Code?: string; message?: string; $fault?: string; $retryable?: unknown };
      const problem = `${e.name ?? 'Error'}: ${e.message ?? String(error)}`;
      const transient =
        TRANSIENT_CODES.has(e.name ?? '') ||
        TRANSIENT_CODES.has(e.Code ?? '') ||
        e.$fault === 'server' ||
        e.$retryable !== undefined ||
        NETWORK_ERROR.test(e.message ?? '');
      throw transient
        ? new ReportStoreUnavailableError(location, problem, { cause: error })
        : new ReportWriteError(location, problem, { cause: error });
    }
    return { location };
  }
}
