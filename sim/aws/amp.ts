import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import type { AmpWorkspaceBackend } from './ampWorkspace.js';

/**
 * The twin's AMP control plane (`aps.<region>.amazonaws.com`) for one workspace: rule groups namespaces and the alert
 * manager definition, as @aws-sdk/client-amp 3.1048 sends them (AWS REST-JSON, schemas_0.js):
 *
 * | operation                       | request                                                    | answer |
 * | ------------------------------- | ---------------------------------------------------------- | ------ |
 * | CreateRuleGroupsNamespace       | `POST /workspaces/{id}/rulegroupsnamespaces` {name, data, clientToken, tags} | 202 |
 * | PutRuleGroupsNamespace          | `PUT /workspaces/{id}/rulegroupsnamespaces/{name}` {data, clientToken}       | 202 |
 * | DescribeRuleGroupsNamespace     | `GET /workspaces/{id}/rulegroupsnamespaces/{name}`                            | 200 |
 * | ListRuleGroupsNamespaces        | `GET /workspaces/{id}/rulegroupsnamespaces?name=&nextToken=&maxResults=`      | 200 |
 * | DeleteRuleGroupsNamespace       | `DELETE /workspaces/{id}/rulegroupsnamespaces/{name}?clientToken=`            | 202 |
 * | Create/PutAlertManagerDefinition | `POST` / `PUT /workspaces/{id}/alertmanager/definition` {data, clientToken}  | 202 |
 * | DescribeAlertManagerDefinition  | `GET /workspaces/{id}/alertmanager/definition`                                | 200 |
 * | DeleteAlertManagerDefinition    | `DELETE /workspaces/{id}/alertmanager/definition?clientToken=`                | 202 |
 * | DescribeWorkspace               | `GET /workspaces/{id}`: ACTIVE, with `prometheusEndpoint`                     | 200 |
 *
 * `data` is the file's bytes in base64 (a blob). A change answers at once with CREATING / UPDATING / DELETING and
 * takes effect `settleMs` later, as on AWS, where it takes seconds: a client must wait for ACTIVE. The data is then
 * checked (AMP's own rules, promtool, amtool) and applied (AmpWorkspaceBackend); the status becomes ACTIVE, or
 * CREATION_FAILED / UPDATE_FAILED with the reason in `statusReason` (a refused update leaves the previous rules or
 * definition running). Errors come as AWS shapes them (`x-amzn-ErrorType`, a JSON body with `message`), so the client
 * raises ConflictException, ResourceNotFoundException, ValidationException.
 */

export interface AmpTwinOptions {
  region: string;
  /** The account in ARNs; default 000000000000 (the SNS twin's). */
  accountId?: string;
  /** The one workspace this control plane knows (`ws-...`). */
  workspaceId: string;
  /** What the workspace does with an accepted change: load the rules, run the definition. */
  backend: AmpWorkspaceBackend;
  clock?: Clock;
  /** How long a change stays CREATING / UPDATING / DELETING before it is applied (default 1000 ms). */
  settleMs?: number;
  /** One line per request and per status change. */
  log?: (line: string) => void;
  /** The workspace's query URL DescribeWorkspace answers (the twin's Prometheus); default: AWS's form of it. */
  prometheusEndpoint?: string;
}

export interface AmpTwin {
  /** `http://127.0.0.1:<port>`: give it to `AmpClient({ endpoint })`. */
  endpoint: string;
  region: string;
  workspaceId: string;
  workspaceArn: string;
  /** Resolves once every change accepted so far has taken effect (or failed). */
  settled(): Promise<void>;
  /** Where the workspace's Alertmanager answers while a definition runs (`http://127.0.0.1:PORT`), else undefined. */
  alertmanagerUrl(): string | undefined;
  /** Stops answering, waits for changes under way, then stops the workspace's Alertmanager. Safe to call twice. */
  stop(): Promise<void>;
}

/** The status codes of both resources (RuleGroupsNamespaceStatusCode, AlertManagerDefinitionStatusCode). */
type StatusCode = 'CREATING' | 'ACTIVE' | 'UPDATING' | 'DELETING' | 'CREATION_FAILED' | 'UPDATE_FAILED';

interface Status {
  statusCode: StatusCode;
  statusReason?: string;
}

interface Resource {
  status: Status;
  /** The last data sent, base64, as Describe returns it. */
  data: string;
  createdAt: number;
  modifiedAt: number;
  /** The clientToken of the request that created it (a retry with the same token is not a conflict). */
  createToken: string | undefined;
}

interface Namespace extends Resource {
  name: string;
  arn: string;
  tags: Record<string, string>;
}

/** A change may be made only when the resource is at rest. */
const AT_REST: readonly StatusCode[] = ['ACTIVE', 'CREATION_FAILED', 'UPDATE_FAILED'];

/** The errors of the AMP API (schemas_0.js: `httpError` of each) and of the AWS front door. */
const AMP_ERRORS = {
  ValidationException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404,
  ConflictException: 409,
  InternalServerException: 500,
  MissingAuthenticationTokenException: 403,
  InvalidSignatureException: 403,
  UnknownOperationException: 404,
} as const;

type AmpErrorCode = keyof typeof AMP_ERRORS;

/** A request AMP would refuse: the error type the SDK maps to an exception, its message and extra fields. */
class AmpTwinRequestError extends Error {
  constructor(
    readonly code: AmpErrorCode,
    message: string,
    readonly fields: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AmpTwinRequestError';
  }
}

/** CreateRuleGroupsNamespace `name`: 1-64 characters of this pattern. */
const NAMESPACE_NAME = /^[0-9A-Za-z][-.0-9A-Z_a-z]*$/;
const MAX_NAME_LENGTH = 64;
/** `clientToken`: 1-64 of `[!-~]`. */
const CLIENT_TOKEN = /^[!-~]{1,64}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DEFAULT_MAX_RESULTS = 100;

/**
 * Starts the twin's AMP control plane on 127.0.0.1 (a free port). It requires a SigV4 Authorization header scoped to
 * service `aps` and the twin's region, without checking the signature.
 */
export async function startAmpTwin(options: AmpTwinOptions): Promise<AmpTwin> {
  const { region, workspaceId, backend } = options;
  const accountId = options.accountId ?? '000000000000';
  const clock = options.clock ?? systemClock;
  const settleMs = options.settleMs ?? 1_000;
  const log = options.log;
  const workspaceArn = `arn:aws:aps:${region}:${accountId}:workspace/${workspaceId}`;
  const namespaces = new Map<string, Namespace>();
  let definition: Resource | undefined;
  const pending = new Set<Promise<void>>();
  /** Changes take effect one at a time, in the order they were accepted (one Prometheus, one Alertmanager). */
  let queue: Promise<void> = Promise.resolve();

  const seconds = () => clock.now() / 1_000;

  /** Runs `change` after the settle time, behind the changes accepted before it. */
  function schedule(change: () => Promise<void>): void {
    const done = new Promise<void>((resolve) => setTimeout(resolve, settleMs))
      .then(() => (queue = queue.then(change, change)))
      .catch((error: unknown) => log?.(`amp twin: a change failed unexpectedly: ${reasonOf(error)}`))
      .finally(() => pending.delete(done));
    pending.add(done);
  }

  /** Applies data to a resource and sets its status from the outcome. */
  async function settle(resource: Resource, label: string, failed: StatusCode, apply: () => Promise<void>) {
    try {
      await apply();
      resource.status = { statusCode: 'ACTIVE' };
    } catch (error) {
      resource.status = { statusCode: failed, statusReason: reasonOf(error) };
    }
    resource.modifiedAt = seconds();
    log?.(
      `amp twin: ${label} -> ${resource.status.statusCode}${resource.status.statusReason ? `: ${resource.status.statusReason}` : ''}`,
    );
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        route(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        if (!(error instanceof AmpTwinRequestError)) {
          log?.(`amp twin: ${req.method ?? ''} ${req.url ?? ''} -> 500: ${reasonOf(error)}`);
          return sendError(res, new AmpTwinRequestError('InternalServerException', reasonOf(error)));
        }
        log?.(
          `amp twin: ${req.method ?? ''} ${req.url ?? ''} -> ${AMP_ERRORS[error.code]} ${error.code}: ${error.message}`,
        );
        sendError(res, error);
      }
    });
  });

  function route(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = new URL(req.url ?? '/', 'http://twin');
    checkAuthorization(req.headers.authorization, region);
    const segments = url.pathname.split('/').slice(1).map(decodeURIComponent);
    const [root, id, kind, ...rest] = segments;
    if (root !== 'workspaces' || id === undefined || id === '') throw unknownOperation(req, url);
    if (id !== workspaceId)
      throw new AmpTwinRequestError('ResourceNotFoundException', `Workspace ${id} not found`, {
        resourceId: id,
        resourceType: 'WORKSPACE',
      });
    const method = req.method ?? '';
    if (kind === undefined && method === 'GET') return sendJson(res, 200, { workspace: describeWorkspace() });
    if (kind === 'rulegroupsnamespaces' && rest.length === 0) {
      if (method === 'POST') return createNamespace(res, parseBody(body));
      if (method === 'GET') return listNamespaces(res, url.searchParams);
    }
    if (kind === 'rulegroupsnamespaces' && rest.length === 1 && rest[0] !== undefined) {
      const name = rest[0];
      if (method === 'GET') return sendJson(res, 200, { ruleGroupsNamespace: describeNamespace(findNamespace(name)) });
      if (method === 'PUT') return putNamespace(res, name, parseBody(body));
      if (method === 'DELETE') return deleteNamespace(res, name, url.searchParams);
    }
    if (kind === 'alertmanager' && rest.length === 1 && rest[0] === 'definition') {
      if (method === 'POST') return createDefinition(res, parseBody(body));
      if (method === 'PUT') return putDefinition(res, parseBody(body));
      if (method === 'GET') return sendJson(res, 200, { alertManagerDefinition: describeDefinition(findDefinition()) });
      if (method === 'DELETE') return deleteDefinition(res, url.searchParams);
    }
    throw unknownOperation(req, url);
  }

  const createdAt = seconds();
  /** DescribeWorkspace: the workspace is ACTIVE from the start, its endpoint the twin's Prometheus. */
  function describeWorkspace() {
    return {
      workspaceId,
      arn: workspaceArn,
      alias: 'vllm-eks-pilot-twin',
      status: { statusCode: 'ACTIVE' },
      prometheusEndpoint:
        options.prometheusEndpoint ?? `https://aps-workspaces.${region}.amazonaws.com/workspaces/${workspaceId}/`,
      createdAt,
    };
  }

  function createNamespace(res: ServerResponse, input: Record<string, unknown>): void {
    const name = requireName(input.name);
    const text = requireData(input.data);
    const clientToken = optionalToken(input.clientToken);
    const tags = optionalTags(input.tags);
    const existing = namespaces.get(name);
    if (existing !== undefined) {
      // The SDK retries with the same clientToken: the retry of a create that succeeded is answered, not refused.
      if (clientToken !== undefined && clientToken === existing.createToken)
        return sendJson(res, 202, namespaceAnswer(existing));
      throw new AmpTwinRequestError('ConflictException', `A rule groups namespace named ${name} already exists`, {
        resourceId: name,
        resourceType: 'RULE_GROUPS_NAMESPACE',
      });
    }
    const now = seconds();
    const namespace: Namespace = {
      name,
      arn: `arn:aws:aps:${region}:${accountId}:rulegroupsnamespace/${workspaceId}/${name}`,
      status: { statusCode: 'CREATING' },
      data: text.base64,
      createdAt: now,
      modifiedAt: now,
      createToken: clientToken,
      tags,
    };
    namespaces.set(name, namespace);
    log?.(`amp twin: CreateRuleGroupsNamespace ${name} -> CREATING`);
    schedule(() =>
      settle(namespace, `rule groups namespace ${name}`, 'CREATION_FAILED', () =>
        backend.installRuleGroupsNamespace(name, text.utf8),
      ),
    );
    sendJson(res, 202, namespaceAnswer(namespace));
  }

  function putNamespace(res: ServerResponse, name: string, input: Record<string, unknown>): void {
    const text = requireData(input.data);
    optionalToken(input.clientToken);
    const namespace = findNamespace(name);
    requireAtRest(namespace.status, `rule groups namespace ${name}`, name, 'RULE_GROUPS_NAMESPACE');
    namespace.status = { statusCode: 'UPDATING' };
    namespace.data = text.base64;
    namespace.modifiedAt = seconds();
    log?.(`amp twin: PutRuleGroupsNamespace ${name} -> UPDATING`);
    schedule(() =>
      settle(namespace, `rule groups namespace ${name}`, 'UPDATE_FAILED', () =>
        backend.installRuleGroupsNamespace(name, text.utf8),
      ),
    );
    sendJson(res, 202, namespaceAnswer(namespace));
  }

  function deleteNamespace(res: ServerResponse, name: string, query: URLSearchParams): void {
    optionalToken(query.get('clientToken') ?? undefined);
    const namespace = findNamespace(name);
    requireAtRest(namespace.status, `rule groups namespace ${name}`, name, 'RULE_GROUPS_NAMESPACE');
    namespace.status = { statusCode: 'DELETING' };
    namespace.modifiedAt = seconds();
    log?.(`amp twin: DeleteRuleGroupsNamespace ${name} -> DELETING`);
    schedule(async () => {
      try {
        await backend.removeRuleGroupsNamespace(name);
      } catch (error) {
        log?.(`amp twin: removing rule groups namespace ${name} from Prometheus failed: ${reasonOf(error)}`);
      }
      namespaces.delete(name);
    });
    sendEmpty(res, 202);
  }

  function listNamespaces(res: ServerResponse, query: URLSearchParams): void {
    const prefix = query.get('name') ?? '';
    const maxResults = query.has('maxResults') ? Number(query.get('maxResults')) : DEFAULT_MAX_RESULTS;
    if (!Number.isInteger(maxResults) || maxResults < 1 || maxResults > DEFAULT_MAX_RESULTS)
      throw validation(
        'maxResults',
        `Value '${query.get('maxResults') ?? ''}' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and ${DEFAULT_MAX_RESULTS}`,
      );
    const after = query.has('nextToken') ? decodeNextToken(query.get('nextToken') ?? '') : undefined;
    const names = [...namespaces.keys()]
      .filter((name) => name.startsWith(prefix))
      .sort()
      .filter((name) => after === undefined || name > after);
    const page = names.slice(0, maxResults);
    const last = page.at(-1);
    sendJson(res, 200, {
      ruleGroupsNamespaces: page.map((name) => summarizeNamespace(findNamespace(name))),
      ...(names.length > maxResults && last !== undefined ? { nextToken: Buffer.from(last).toString('base64') } : {}),
    });
  }

  function createDefinition(res: ServerResponse, input: Record<string, unknown>): void {
    const text = requireData(input.data);
    const clientToken = optionalToken(input.clientToken);
    if (definition !== undefined) {
      if (clientToken !== undefined && clientToken === definition.createToken)
        return sendJson(res, 202, { status: definition.status });
      throw new AmpTwinRequestError(
        'ConflictException',
        `An alert manager definition already exists in workspace ${workspaceId}`,
        {
          resourceId: workspaceId,
          resourceType: 'ALERT_MANAGER_DEFINITION',
        },
      );
    }
    const now = seconds();
    const created: Resource = {
      status: { statusCode: 'CREATING' },
      data: text.base64,
      createdAt: now,
      modifiedAt: now,
      createToken: clientToken,
    };
    definition = created;
    log?.('amp twin: CreateAlertManagerDefinition -> CREATING');
    schedule(() =>
      settle(created, 'alert manager definition', 'CREATION_FAILED', () =>
        backend.installAlertManagerDefinition(text.utf8),
      ),
    );
    sendJson(res, 202, { status: created.status });
  }

  function putDefinition(res: ServerResponse, input: Record<string, unknown>): void {
    const text = requireData(input.data);
    optionalToken(input.clientToken);
    const current = findDefinition();
    requireAtRest(current.status, 'the alert manager definition', workspaceId, 'ALERT_MANAGER_DEFINITION');
    current.status = { statusCode: 'UPDATING' };
    current.data = text.base64;
    current.modifiedAt = seconds();
    log?.('amp twin: PutAlertManagerDefinition -> UPDATING');
    schedule(() =>
      settle(current, 'alert manager definition', 'UPDATE_FAILED', () =>
        backend.installAlertManagerDefinition(text.utf8),
      ),
    );
    sendJson(res, 202, { status: current.status });
  }

  function deleteDefinition(res: ServerResponse, query: URLSearchParams): void {
    optionalToken(query.get('clientToken') ?? undefined);
    const current = findDefinition();
    requireAtRest(current.status, 'the alert manager definition', workspaceId, 'ALERT_MANAGER_DEFINITION');
    current.status = { statusCode: 'DELETING' };
    current.modifiedAt = seconds();
    log?.('amp twin: DeleteAlertManagerDefinition -> DELETING');
    schedule(async () => {
      try {
        await backend.removeAlertManagerDefinition();
      } catch (error) {
        log?.(`amp twin: stopping the alert manager failed: ${reasonOf(error)}`);
      }
      if (definition === current) definition = undefined;
    });
    sendEmpty(res, 202);
  }

  function findNamespace(name: string): Namespace {
    const namespace = namespaces.get(name);
    if (namespace === undefined)
      throw new AmpTwinRequestError('ResourceNotFoundException', `Rule groups namespace ${name} not found`, {
        resourceId: name,
        resourceType: 'RULE_GROUPS_NAMESPACE',
      });
    return namespace;
  }

  function findDefinition(): Resource {
    if (definition === undefined)
      throw new AmpTwinRequestError(
        'ResourceNotFoundException',
        `Alert manager definition not found in workspace ${workspaceId}`,
        {
          resourceId: workspaceId,
          resourceType: 'ALERT_MANAGER_DEFINITION',
        },
      );
    return definition;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let stopping: Promise<void> | undefined;

  const settled = async () => {
    while (pending.size > 0) await Promise.all([...pending]);
    await queue;
  };

  return {
    endpoint: `http://127.0.0.1:${port}`,
    region,
    workspaceId,
    workspaceArn,
    settled,
    alertmanagerUrl: () => backend.alertmanagerUrl(),
    stop() {
      stopping ??= (async () => {
        await new Promise<void>((resolve, reject) => {
          server.close((error) => (error ? reject(error) : resolve()));
          // Keep-alive sockets from the SDK's agent would hold close() open.
          server.closeAllConnections();
        });
        await settled();
        await backend.stop();
      })();
      return stopping;
    },
  };
}

function namespaceAnswer(namespace: Namespace) {
  return { name: namespace.name, arn: namespace.arn, status: namespace.status, tags: namespace.tags };
}

/** RuleGroupsNamespaceDescription: the summary and the data. */
function describeNamespace(namespace: Namespace) {
  return { ...summarizeNamespace(namespace), data: namespace.data };
}

/** RuleGroupsNamespaceSummary: the description without the data. */
function summarizeNamespace(namespace: Namespace) {
  return {
    arn: namespace.arn,
    name: namespace.name,
    status: namespace.status,
    createdAt: namespace.createdAt,
    modifiedAt: namespace.modifiedAt,
    tags: namespace.tags,
  };
}

function describeDefinition(resource: Resource) {
  return {
    status: resource.status,
    data: resource.data,
    createdAt: resource.createdAt,
    modifiedAt: resource.modifiedAt,
  };
}

/**
 * SigV4 as AWS's front door checks it before any operation: a signature must be there, scoped to service `aps` and
 * to the region of the endpoint (a client configured for another region is refused, as on AWS).
 */
function checkAuthorization(header: string | undefined, region: string): void {
  if (header === undefined || header === '')
    throw new AmpTwinRequestError('MissingAuthenticationTokenException', 'Missing Authentication Token');
  const scope = /Credential=[^/,\s]+\/\d{8}\/([^/,\s]+)\/([^/,\s]+)\/aws4_request/.exec(header);
  if (!header.startsWith('AWS4-HMAC-SHA256 ') || scope === null)
    throw new AmpTwinRequestError(
      'InvalidSignatureException',
      'Authorization header requires a SigV4 Credential (AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/aps/aws4_request)',
    );
  if (scope[2] !== 'aps')
    throw new AmpTwinRequestError(
      'InvalidSignatureException',
      `Credential should be scoped to correct service: 'aps'. (got '${scope[2] ?? ''}')`,
    );
  if (scope[1] !== region)
    throw new AmpTwinRequestError(
      'InvalidSignatureException',
      `Credential should be scoped to a valid region. (this endpoint is ${region}, the request is signed for '${scope[1] ?? ''}')`,
    );
}

function unknownOperation(req: IncomingMessage, url: URL): AmpTwinRequestError {
  return new AmpTwinRequestError(
    'UnknownOperationException',
    `The twin's AMP control plane has no operation ${req.method ?? ''} ${url.pathname} (it serves rule groups namespaces and the alert manager definition of its workspace)`,
  );
}

function parseBody(body: string): Record<string, unknown> {
  if (body.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new AmpTwinRequestError('ValidationException', 'The request body is not JSON', { reason: 'CANNOT_PARSE' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new AmpTwinRequestError('ValidationException', 'The request body must be a JSON object', {
      reason: 'CANNOT_PARSE',
    });
  return parsed as Record<string, unknown>;
}

/** One field that failed its constraint, worded as AWS words it. */
function validation(field: string, message: string): AmpTwinRequestError {
  return new AmpTwinRequestError('ValidationException', `1 validation error detected: ${message}`, {
    reason: 'FIELD_VALIDATION_FAILED',
    fieldList: [{ name: field, message }],
  });
}

function requireName(value: unknown): string {
  if (value === undefined || value === null)
    throw validation('name', "Value null at 'name' failed to satisfy constraint: Member must not be null");
  if (typeof value !== 'string' || value.length < 1 || value.length > MAX_NAME_LENGTH)
    throw validation(
      'name',
      `Value ${JSON.stringify(value)} at 'name' failed to satisfy constraint: Member must have length between 1 and ${MAX_NAME_LENGTH}`,
    );
  if (!NAMESPACE_NAME.test(value))
    throw validation(
      'name',
      `Value '${value}' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: [0-9A-Za-z][-.0-9A-Z_a-z]*`,
    );
  return value;
}

/** `data`, a blob: base64 on the wire. */
function requireData(value: unknown): { base64: string; utf8: string } {
  if (value === undefined || value === null)
    throw validation('data', "Value null at 'data' failed to satisfy constraint: Member must not be null");
  if (typeof value !== 'string' || !BASE64.test(value))
    throw new AmpTwinRequestError('ValidationException', "The value of 'data' is not valid base64", {
      reason: 'CANNOT_PARSE',
    });
  return { base64: value, utf8: Buffer.from(value, 'base64').toString('utf8') };
}

function optionalToken(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !CLIENT_TOKEN.test(value))
    throw validation(
      'clientToken',
      `Value ${JSON.stringify(value)} at 'clientToken' failed to satisfy constraint: Member must have length between 1 and 64 of [!-~]`,
    );
  return value;
}

function optionalTags(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw validation('tags', "Value at 'tags' failed to satisfy constraint: Member must be a map of strings");
  for (const [key, tag] of Object.entries(value)) {
    if (typeof tag !== 'string' || key.length < 1 || key.length > 128 || /^aws:/i.test(key))
      throw validation(
        'tags',
        `Tag ${JSON.stringify(key)} is not valid: keys 1-128 characters, not starting with aws:`,
      );
  }
  return { ...(value as Record<string, string>) };
}

function decodeNextToken(token: string): string {
  const name = Buffer.from(token, 'base64').toString('utf8');
  if (token === '' || !NAMESPACE_NAME.test(name))
    throw new AmpTwinRequestError('ValidationException', 'Invalid nextToken', { reason: 'FIELD_VALIDATION_FAILED' });
  return name;
}

function requireAtRest(status: Status, label: string, resourceId: string, resourceType: string): void {
  if (!AT_REST.includes(status.statusCode))
    throw new AmpTwinRequestError(
      'ConflictException',
      `${label} is ${status.statusCode}; wait until it is ACTIVE, CREATION_FAILED or UPDATE_FAILED`,
      { resourceId, resourceType },
    );
}

/** A status reason is one line: the first of the error's message. */
function reasonOf(error: unknown): string {
  return ((error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '').trim();
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(text);
}

function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-length': 0, 'x-amzn-requestid': randomUUID() });
  res.end();
}

function sendError(res: ServerResponse, error: AmpTwinRequestError): void {
  const text = JSON.stringify({ message: error.message, ...error.fields });
  res.writeHead(AMP_ERRORS[error.code], {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
    'x-amzn-errortype': error.code,
  });
  res.end(text);
}
