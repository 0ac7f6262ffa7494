import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../shared/clock/index.js';

/**
 * The twin's Secrets Manager. @aws-sdk/client-secrets-manager 3.1164 speaks AWS JSON 1.1 (runtimeConfig.shared.js:
 * `AwsJson1_1Protocol`, target prefix `secretsmanager`): `POST /` with `X-Amz-Target: secretsmanager.<Operation>`
 * and `content-type: application/x-amz-json-1.1`. Errors are HTTP 400/500 with a JSON body
 * `{"__type": "<Code>", "Message": "..."}`; the SDK reads `__type` (then `code`, then the `x-amzn-errortype` header)
 * and maps it to the exception class of that name (`loadJsonRpcErrorCode` in @smithy/core).
 *
 * Only GetSecretValue is served, by name, full ARN or partial ARN (without the 6-character suffix), with the
 * AWSCURRENT and AWSPREVIOUS stages as Secrets Manager keeps them when a value is replaced.
 */

export interface SecretsManagerTwinOptions {
  region: string;
  /** Secrets present at start: name → SecretString. */
  secrets?: Record<string, string>;
  /** The account in ARNs; default 000000000000. */
  accountId?: string;
  clock?: Clock;
  /** One line per request; secret values are never logged. */
  log?: (line: string) => void;
}

export interface SecretsManagerTwin {
  /** `http://127.0.0.1:<port>`: give it to `SecretsManagerClient({ endpoint })`. */
  endpoint: string;
  region: string;
  /** Creates the secret or gives it a new current version (the old one becomes AWSPREVIOUS); returns the ARN. */
  putSecret(name: string, value: string): string;
  /** API requests received (every operation, failed ones included). */
  requestCount(): number;
  /** The next `n` requests fail: 500 → InternalServiceError; 429 → ThrottlingException (sent as HTTP 400, as AWS does). */
  failNextRequests(n: number, status?: number): void;
  stop(): Promise<void>;
}

interface SecretVersion {
  versionId: string;
  value: string;
  createdAtMs: number;
  stages: string[];
}

interface StoredSecret {
  name: string;
  arn: string;
  versions: SecretVersion[];
}

/** The errors the twin answers with: HTTP status and Secrets Manager's message. */
const ERRORS = {
  ResourceNotFoundException: 400,
  InvalidParameterException: 400,
  InvalidRequestException: 400,
  MissingAuthenticationTokenException: 400,
  UnknownOperationException: 400,
  SerializationException: 400,
  ThrottlingException: 400,
  InternalServiceError: 500,
} as const;

type ErrorCode = keyof typeof ERRORS;

class SecretsManagerTwinRequestError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SecretsManagerTwinRequestError';
  }
}

const TARGET_PREFIX = 'secretsmanager.';
const CONTENT_TYPE = 'application/x-amz-json-1.1';
// Secret names: 1-512 of letters, digits and /_+=.@- (CreateSecret "Name").
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;

/** Starts the Secrets Manager twin on 127.0.0.1 (a free port). It requires an Authorization header (any signature). */
export async function startSecretsManagerTwin(options: SecretsManagerTwinOptions): Promise<SecretsManagerTwin> {
  const region = options.region;
  const accountId = options.accountId ?? '000000000000';
  const clock = options.clock ?? systemClock;
  const log = options.log;
  const secrets = new Map<string, StoredSecret>();
  let requests = 0;
  let failuresLeft = 0;
  let failureCode: ErrorCode = 'InternalServiceError';

  function putSecret(name: string, value: string): string {
    if (!SECRET_NAME.test(name))
      throw new RangeError(`putSecret: name ${JSON.stringify(name)} must be 1-512 of letters, digits and /_+=.@-`);
    const existing = secrets.get(name);
    const version: SecretVersion = {
      versionId: randomUUID(),
      value,
      createdAtMs: clock.now(),
      stages: ['AWSCURRENT'],
    };
    if (existing === undefined) {
      // Secrets Manager appends a dash and 6 random characters to the name in the ARN.
      const arn = `arn:aws:secretsmanager:${region}:${accountId}:secret:${name}-${randomBytes(3).toString('hex')}`;
      secrets.set(name, { name, arn, versions: [version] });
      return arn;
    }
    for (const old of existing.versions) old.stages = old.stages.includes('AWSCURRENT') ? ['AWSPREVIOUS'] : [];
    existing.versions = [version, ...existing.versions.filter((old) => old.stages.length > 0)];
    return existing.arn;
  }

  for (const [name, value] of Object.entries(options.secrets ?? {})) putSecret(name, value);

  function find(secretId: string): StoredSecret | undefined {
    for (const secret of secrets.values())
      if (secretId === secret.name || secretId === secret.arn || secretId === secret.arn.slice(0, -7)) return secret;
    return undefined;
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        route(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        sendError(res, 'InternalServiceError', error instanceof Error ? error.message : String(error));
      }
    });
  });

  function route(req: IncomingMessage, res: ServerResponse, body: string): void {
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : target;
    try {
      if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://twin').pathname !== '/')
        throw new SecretsManagerTwinRequestError(
          'UnknownOperationException',
          `no route ${req.method ?? ''} ${req.url ?? ''}`,
        );
      requests += 1;
      if (!req.headers.authorization)
        throw new SecretsManagerTwinRequestError('MissingAuthenticationTokenException', 'Missing Authentication Token');
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        throw new SecretsManagerTwinRequestError(
          failureCode,
          failureCode === 'ThrottlingException'
            ? 'Rate exceeded (twin failNextRequests)'
            : 'injected failure (twin failNextRequests)',
        );
      }
      let input: unknown;
      try {
        input = body === '' ? {} : JSON.parse(body);
      } catch {
        throw new SecretsManagerTwinRequestError('SerializationException', 'the request body is not JSON');
      }
      if (operation !== 'GetSecretValue' || !target.startsWith(TARGET_PREFIX))
        throw new SecretsManagerTwinRequestError(
          'UnknownOperationException',
          `unknown operation ${JSON.stringify(target)} (the twin serves secretsmanager.GetSecretValue)`,
        );
      return getSecretValue(res, input as Record<string, unknown>);
    } catch (error) {
      if (!(error instanceof SecretsManagerTwinRequestError)) throw error;
      log?.(`secrets manager twin: ${operation || '?'} -> ${ERRORS[error.code]} ${error.code}: ${error.message}`);
      sendError(res, error.code, error.message);
    }
  }

  function getSecretValue(res: ServerResponse, input: Record<string, unknown>): void {
    const { SecretId: secretId, VersionId: versionId, VersionStage: versionStage } = input;
    if (typeof secretId !== 'string' || secretId === '')
      throw new SecretsManagerTwinRequestError(
        'InvalidParameterException',
        'SecretId is required: a secret name or ARN',
      );
    const secret = find(secretId);
    if (secret === undefined)
      throw new SecretsManagerTwinRequestError(
        'ResourceNotFoundException',
        "Secrets Manager can't find the specified secret.",
      );
    let version: SecretVersion | undefined;
    if (typeof versionId === 'string') {
      version = secret.versions.find((v) => v.versionId === versionId);
      if (version === undefined)
        throw new SecretsManagerTwinRequestError(
          'ResourceNotFoundException',
          `Secrets Manager can't find the specified secret value for VersionId: ${versionId}`,
        );
      if (typeof versionStage === 'string' && !version.stages.includes(versionStage))
        throw new SecretsManagerTwinRequestError(
          'InvalidRequestException',
          'You provided a VersionStage that is not attached to the version specified by VersionId.',
        );
    } else {
      const stage = typeof versionStage === 'string' ? versionStage : 'AWSCURRENT';
      version = secret.versions.find((v) => v.stages.includes(stage));
      if (version === undefined)
        throw new SecretsManagerTwinRequestError(
          'ResourceNotFoundException',
          `Secrets Manager can't find the specified secret value for staging label: ${stage}`,
        );
    }
    log?.(`secrets manager twin: GetSecretValue ${secret.name} -> version ${version.versionId}`);
    sendJson(res, 200, {
      ARN: secret.arn,
      Name: secret.name,
      SecretString: version.value,
      VersionId: version.versionId,
      VersionStages: version.stages,
      // JSON 1.1 timestamps are epoch seconds (the SDK's default timestamp format 7).
      CreatedDate: version.createdAtMs / 1000,
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    region,
    putSecret,
    requestCount: () => requests,
    failNextRequests: (n, status = 500) => {
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`failNextRequests: n must be an integer >= 0, got ${n}`);
      if (status !== 500 && status !== 429)
        throw new RangeError(
          `failNextRequests: status must be 500 (InternalServiceError) or 429 (ThrottlingException), got ${status}`,
        );
      failuresLeft = n;
      failureCode = status === 429 ? 'ThrottlingException' : 'InternalServiceError';
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets from the SDK's agent would hold close() open.
        server.closeAllConnections();
      }),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(text);
}

function sendError(res: ServerResponse, code: ErrorCode, message: string): void {
  sendJson(res, ERRORS[code], { __type: code, Message: message });
}
