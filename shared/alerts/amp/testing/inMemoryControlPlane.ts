import {
  AMP_STATUS,
  describeAmpResource,
  type AmpAlertingControlPlane,
  type AmpAlertingResource,
  type AmpCallOptions,
  type AmpResourceDescription,
  type AmpResourceStatus,
} from '../AmpAlertingControlPlane.js';

/**
 * An in-memory AMP workspace for unit tests of what uses the port (the installer's handler, preflight): a create or
 * put is CREATING/UPDATING for `settleAfterDescribes` Describe calls, then ACTIVE, or the failed status `refuse` set.
 */
export class InMemoryAmpControlPlane implements AmpAlertingControlPlane {
  readonly workspaceId: string;
  /** Every call, in order: `create rule groups namespace vllm-eks-pilot-prod`. */
  readonly calls: string[] = [];
  readonly #held = new Map<string, { data: string; status: AmpResourceStatus; describesLeft: number }>();
  readonly #refusals = new Map<string, string>();
  readonly #settleAfterDescribes: number;

  constructor(
    workspaceId = 'ws-b226cc2a-a446-46a9-933a-ac50479a5568',
    options: { settleAfterDescribes?: number } = {},
  ) {
    this.workspaceId = workspaceId;
    this.#settleAfterDescribes = options.settleAfterDescribes ?? 1;
  }

  /** Puts `resource` in the workspace as it is (someone else's rules, a failed earlier run). */
  seed(resource: AmpAlertingResource, data: string, status: AmpResourceStatus = { code: AMP_STATUS.active }): void {
    this.#held.set(key(resource), { data, status, describesLeft: 0 });
  }

  /** The next create or put of `resource` ends CREATION_FAILED/UPDATE_FAILED with `reason`. */
  refuse(resource: AmpAlertingResource, reason: string): void {
    this.#refusals.set(key(resource), reason);
  }

  /** The data AMP holds for `resource`, or undefined. */
  held(resource: AmpAlertingResource): string | undefined {
    return this.#held.get(key(resource))?.data;
  }

  describe(resource: AmpAlertingResource, _options?: AmpCallOptions): Promise<AmpResourceDescription | null> {
    this.calls.push(`describe ${key(resource)}`);
    const held = this.#held.get(key(resource));
    if (held === undefined) return Promise.resolve(null);
    if (held.describesLeft > 0 && --held.describesLeft === 0) {
      const refusal = this.#refusals.get(key(resource));
      this.#refusals.delete(key(resource));
      const creating = held.status.code === AMP_STATUS.creating;
      held.status =
        refusal === undefined
          ? { code: AMP_STATUS.active }
          : { code: creating ? AMP_STATUS.creationFailed : AMP_STATUS.updateFailed, reason: refusal };
    }
    return Promise.resolve({ data: held.data, status: { ...held.status } });
  }

  create(resource: AmpAlertingResource, data: string): Promise<AmpResourceStatus> {
    this.calls.push(`create ${key(resource)}`);
    const status = { code: AMP_STATUS.creating };
    this.#held.set(key(resource), { data, status, describesLeft: this.#settleAfterDescribes });
    return Promise.resolve({ ...status });
  }

  put(resource: AmpAlertingResource, data: string): Promise<AmpResourceStatus> {
    this.calls.push(`put ${key(resource)}`);
    const status = { code: AMP_STATUS.updating };
    this.#held.set(key(resource), { data, status, describesLeft: this.#settleAfterDescribes });
    return Promise.resolve({ ...status });
  }

  delete(resource: AmpAlertingResource): Promise<void> {
    this.calls.push(`delete ${key(resource)}`);
    this.#held.delete(key(resource));
    return Promise.resolve();
  }
}

const key = describeAmpResource;
