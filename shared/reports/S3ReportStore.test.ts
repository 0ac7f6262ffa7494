import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { ReportKeyInvalidError, ReportStoreUnavailableError, ReportWriteError } from './errors.js';
import { S3ReportStore } from './S3ReportStore.js';

interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** S3 error bodies as S3 sends them (REST-XML). */
function s3Error(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>TWIN</RequestId></Error>`;
}

describe('Class: S3ReportStore', () => {
  let server: Server;
  let endpoint: string;
  let client: S3Client;
  const seen: SeenRequest[] = [];
  /** Answers to give instead of 200, in order. */
  const answers: Array<{ status: number; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          path: decodeURIComponent(new URL(req.url ?? '/', 'http://s3').pathname),
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        const answer = answers.shift();
        if (answer !== undefined) {
          res.writeHead(answer.status, { 'content-type': 'application/xml' });
          res.end(answer.body);
          return;
        }
        res.writeHead(200, { etag: '"d41d8cd98f00b204e9800998ecf8427e"', 'x-amz-server-side-encryption': 'AES256' });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new S3Client({
      region: 'us-east-2',
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIDTWINS3', secretAccessKey: 'twin-s3-not-a-secret' },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    client.destroy();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  });

  afterEach(() => {
    seen.length = 0;
    answers.length = 0;
  });

  describe('Method: put', () => {
    it('sends PutObject to the bucket path with the body, content type and SSE AES256, and names the s3:// location', async () => {
      // Prepare
      const store = new S3ReportStore({ client, bucket: 'vllm-pilot-reports' });
      const body = JSON.stringify({ version: 1, analysis: { lastStableRps: 50 } });

      // Act
      const result = await store.put(
        'calibration/prod-use2/default/vllm-app/run-1/report.json',
        body,
        'application/json',
      );

      // Assess
      expect(result).toEqual({
        location: 's3://vllm-pilot-reports/calibration/prod-use2/default/vllm-app/run-1/report.json',
      });
      expect(seen).toHaveLength(1);
      const [request] = seen;
      expect(request?.method).toBe('PUT');
      expect(request?.path).toBe('/vllm-pilot-reports/calibration/prod-use2/default/vllm-app/run-1/report.json');
      expect(request?.headers['content-type']).toBe('application/json');
      expect(request?.headers['x-amz-server-side-encryption']).toBe('AES256');
      expect(request?.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDTWINS3\/\d{8}\/us-east-2\/s3\/aws4_request/,
      );
      expect(request?.body).toBe(body);
    });

    it.each([
      { case: 'SlowDown (503)', status: 503, code: 'SlowDown', error: ReportStoreUnavailableError, retryable: true },
      {
        case: 'InternalError (500)',
        status: 500,
        code: 'InternalError',
        error: ReportStoreUnavailableError,
        retryable: true,
      },
      { case: 'AccessDenied (403)', status: 403, code: 'AccessDenied', error: ReportWriteError, retryable: false },
      { case: 'NoSuchBucket (404)', status: 404, code: 'NoSuchBucket', error: ReportWriteError, retryable: false },
    ])('turns S3 $case into $error.name with the location', async ({ status, code, error, retryable }) => {
      // Prepare
      const store = new S3ReportStore({ client, bucket: 'vllm-pilot-reports' });
      answers.push({ status, body: s3Error(code, 'refused by the test server') });

      // Act
      const act = store.put('run-1/chart.svg', '<svg/>', 'image/svg+xml');

      // Assess
      await expect(act).rejects.toBeInstanceOf(error);
      answers.push({ status, body: s3Error(code, 'refused by the test server') });
      await expect(store.put('run-1/chart.svg', '<svg/>', 'image/svg+xml')).rejects.toMatchObject({
        retryable,
        location: 's3://vllm-pilot-reports/run-1/chart.svg',
      });
    });

    it('refuses a key with ".." before sending anything', async () => {
      // Prepare
      const store = new S3ReportStore({ client, bucket: 'vllm-pilot-reports' });

      // Act
      const act = store.put('calibration/../../etc/passwd', 'x', 'text/plain');

      // Assess
      await expect(act).rejects.toThrow(ReportKeyInvalidError);
      expect(seen).toHaveLength(0);
    });
  });

  describe('constructor', () => {
    it('refuses a bucket name S3 would refuse, naming what is accepted', () => {
      // Act
      const act = () => new S3ReportStore({ client, bucket: 'Reports_Bucket' });

      // Assess
      expect(act).toThrow(/"Reports_Bucket" is not a bucket name; accepted: 3 to 63 lowercase letters/);
    });
  });
});
