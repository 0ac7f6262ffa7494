import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A pass-through HTTP proxy on 127.0.0.1 in front of one of the twin's AWS endpoints (DynamoDB, SNS) that counts the
 * operations the product sends: the DynamoDB JSON protocol names them in `X-Amz-Target` (`DynamoDB_20120810.GetItem`),
 * SNS's query protocol in the form field `Action`. The bytes go through unchanged, so the product sees the twin.
 */
export interface RequestCounter {
  endpoint: string;
  /** Operation name → requests so far. */
  counts(): Record<string, number>;
  reset(): void;
  stop(): Promise<void>;
}

export async function startRequestCounter(target: string): Promise<RequestCounter> {
  const upstream = new URL(target);
  let counts: Record<string, number> = {};
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const amzTarget = req.headers['x-amz-target'];
      const operation =
        typeof amzTarget === 'string'
          ? (amzTarget.split('.').pop() ?? amzTarget)
          : (new URLSearchParams(body.toString('utf8')).get('Action') ?? 'unknown');
      counts[operation] = (counts[operation] ?? 0) + 1;
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', (error) => {
        res.writeHead(502);
        res.end(error.message);
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts: () => ({ ...counts }),
    reset: () => {
      counts = {};
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const DYNAMODB_READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);
const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/**
 * Request units of counted DynamoDB operations, assuming each reads or writes one item of at most 4 KB / 1 KB (one
 * unit each; a strongly consistent read of such an item is one unit, an eventually consistent one half).
 */
export function dynamoDbUnits(counts: Record<string, number>): { reads: number; writes: number } {
  let reads = 0;
  let writes = 0;
  for (const [operation, n] of Object.entries(counts)) {
    if (DYNAMODB_READS.has(operation)) reads += n;
    if (DYNAMODB_WRITES.has(operation)) writes += n;
  }
  return { reads, writes };
}
