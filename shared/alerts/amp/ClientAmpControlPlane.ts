import {
  type AmpClient,
  CreateAlertManagerDefinitionCommand,
  CreateRuleGroupsNamespaceCommand,
  DeleteAlertManagerDefinitionCommand,
  DeleteRuleGroupsNamespaceCommand,
  DescribeAlertManagerDefinitionCommand,
  DescribeRuleGroupsNamespaceCommand,
  PutAlertManagerDefinitionCommand,
  PutRuleGroupsNamespaceCommand,
} from '@aws-sdk/client-amp';
import {
  AMP_STATUS_CODES,
  type AmpAlertingControlPlane,
  type AmpAlertingResource,
  type AmpCallOptions,
  type AmpResourceDescription,
  type AmpResourceStatus,
  type AmpStatusCode,
} from './AmpAlertingControlPlane.js';
import { AmpAlertingError, AmpAnswerInvalidError, AmpRequestError } from './errors.js';

export interface ClientAmpControlPlaneOptions {
  /** An AmpClient for the workspace's region (with the endpoint override for the twin, and a request timeout). */
  client: AmpClient;
  workspaceId: string;
}

/** SDK errors that say "try again later" (AMP API reference: 429 ThrottlingException, 500 InternalServerException). */
const RETRYABLE_ERRORS = new Set(['ThrottlingException', 'InternalServerException', 'TimeoutError', 'AbortError']);

/**
 * The AmpAlertingControlPlane over @aws-sdk/client-amp: the YAML goes up as the `data` blob (the SDK base64-encodes
 * it) and comes back decoded. "Not found" is an answer (null, or nothing to delete), every other failure an
 * AmpRequestError naming the operation and the resource.
 */
export class ClientAmpControlPlane implements AmpAlertingControlPlane {
  readonly workspaceId: string;
  readonly #client: AmpClient;

  constructor(options: ClientAmpControlPlaneOptions) {
    this.#client = options.client;
    this.workspaceId = options.workspaceId;
  }

  async describe(resource: AmpAlertingResource, options?: AmpCallOptions): Promise<AmpResourceDescription | null> {
    const workspaceId = this.workspaceId;
    const operation =
      resource.kind === 'ruleGroupsNamespace' ? 'DescribeRuleGroupsNamespace' : 'DescribeAlertManagerDefinition';
    const described = await this.#call(operation, resource, options, async (abortSignal) => {
      if (resource.kind === 'ruleGroupsNamespace') {
        const output = await this.#client.send(
          new DescribeRuleGroupsNamespaceCommand({ workspaceId, name: resource.name }),
          { abortSignal },
        );
        return output.ruleGroupsNamespace;
      }
      const output = await this.#client.send(new DescribeAlertManagerDefinitionCommand({ workspaceId }), {
        abortSignal,
      });
      return output.alertManagerDefinition;
    });
    if (described === NOT_FOUND) return null;
    if (described === undefined)
      throw new AmpAnswerInvalidError(operation, resource, 'the answer holds no description');
    if (!(described.data instanceof Uint8Array))
      throw new AmpAnswerInvalidError(operation, resource, 'the description holds no data');
    return {
      data: new TextDecoder('utf-8', { fatal: false }).decode(described.data),
      status: statusOf(operation, resource, described.status),
    };
  }

  async create(resource: AmpAlertingResource, data: string, options?: AmpCallOptions): Promise<AmpResourceStatus> {
    const workspaceId = this.workspaceId;
    const bytes = new TextEncoder().encode(data);
    const operation =
      resource.kind === 'ruleGroupsNamespace' ? 'CreateRuleGroupsNamespace' : 'CreateAlertManagerDefinition';
    const status = await this.#call(operation, resource, options, async (abortSignal) => {
      if (resource.kind === 'ruleGroupsNamespace') {
        const command = new CreateRuleGroupsNamespaceCommand({ workspaceId, name: resource.name, data: bytes });
        return (await this.#client.send(command, { abortSignal })).status;
      }
      const command = new CreateAlertManagerDefinitionCommand({ workspaceId, data: bytes });
      return (await this.#client.send(command, { abortSignal })).status;
    });
    if (status === NOT_FOUND) throw notFound(operation, resource);
    return statusOf(operation, resource, status);
  }

  async put(resource: AmpAlertingResource, data: string, options?: AmpCallOptions): Promise<AmpResourceStatus> {
    const workspaceId = this.workspaceId;
    const bytes = new TextEncoder().encode(data);
    const operation = resource.kind === 'ruleGroupsNamespace' ? 'PutRuleGroupsNamespace' : 'PutAlertManagerDefinition';
    const status = await this.#call(operation, resource, options, async (abortSignal) => {
      if (resource.kind === 'ruleGroupsNamespace') {
        const command = new PutRuleGroupsNamespaceCommand({ workspaceId, name: resource.name, data: bytes });
        return (await this.#client.send(command, { abortSignal })).status;
      }
      const command = new PutAlertManagerDefinitionCommand({ workspaceId, data: bytes });
      return (await this.#client.send(command, { abortSignal })).status;
    });
    if (status === NOT_FOUND) throw notFound(operation, resource);
    return statusOf(operation, resource, status);
  }

  async delete(resource: AmpAlertingResource, options?: AmpCallOptions): Promise<void> {
    const workspaceId = this.workspaceId;
    const operation =
      resource.kind === 'ruleGroupsNamespace' ? 'DeleteRuleGroupsNamespace' : 'DeleteAlertManagerDefinition';
    await this.#call(operation, resource, options, async (abortSignal) => {
      if (resource.kind === 'ruleGroupsNamespace')
        await this.#client.send(new DeleteRuleGroupsNamespaceCommand({ workspaceId, name: resource.name }), {
          abortSignal,
        });
      else await this.#client.send(new DeleteAlertManagerDefinitionCommand({ workspaceId }), { abortSignal });
    });
  }

  /**
   * The data of rule groups namespace `namespace`, or undefined when there is none: preflight check 5's
   * AmpRuleGroupsSource ("rules present and equal"), which this class satisfies as it is.
   */
  async describeRuleGroups(namespace: string, signal?: AbortSignal): Promise<string | undefined> {
    const held = await this.describe({ kind: 'ruleGroupsNamespace', name: namespace }, { signal });
    return held?.data;
  }

  /** Runs one SDK call: ResourceNotFoundException becomes NOT_FOUND, every other error an AmpRequestError. */
  async #call<T>(
    operation: string,
    resource: AmpAlertingResource,
    options: AmpCallOptions | undefined,
    send: (abortSignal: AbortSignal | undefined) => Promise<T>,
  ): Promise<T | typeof NOT_FOUND> {
    try {
      return await send(options?.signal);
    } catch (error) {
      if (error instanceof AmpAlertingError) throw error;
      const name = (error as { name?: unknown }).name;
      if (name === 'ResourceNotFoundException') return NOT_FOUND;
      throw new AmpRequestError(operation, resource, isRetryable(error), { cause: error });
    }
  }
}

const NOT_FOUND = Symbol('not found');

/** A create or put answered "not found": the workspace itself is missing (a wrong `ampWorkspaceId`). */
function notFound(operation: string, resource: AmpAlertingResource): AmpRequestError {
  return new AmpRequestError(operation, resource, false, {
    cause: new Error('ResourceNotFoundException: the workspace does not exist (check ampWorkspaceId and ampRegion)'),
  });
}

function isRetryable(error: unknown): boolean {
  const sdk = error as { name?: unknown; $fault?: unknown; $retryable?: unknown } | undefined;
  if (sdk === undefined || sdk === null) return false;
  if (typeof sdk.name === 'string' && RETRYABLE_ERRORS.has(sdk.name)) return true;
  return sdk.$fault === 'server' || (sdk.$retryable !== undefined && sdk.$retryable !== null);
}

function statusOf(
  operation: string,
  resource: AmpAlertingResource,
  status: { statusCode?: string | undefined; statusReason?: string | undefined } | undefined,
): AmpResourceStatus {
  const code = status?.statusCode;
  if (code === undefined || !(AMP_STATUS_CODES as readonly string[]).includes(code))
    throw new AmpAnswerInvalidError(
      operation,
      resource,
      `status code ${JSON.stringify(code)} is not one AMP documents (${AMP_STATUS_CODES.join(', ')})`,
    );
  const reason = status?.statusReason;
  return { code: code as AmpStatusCode, ...(reason === undefined || reason === '' ? {} : { reason }) };
}
