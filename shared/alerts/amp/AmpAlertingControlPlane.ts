/**
 * The port to AMP's alerting control plane: a workspace's rule groups namespaces and its one Alertmanager definition,
 * as the installer (and preflight's "rules present and equal") need them. The AWS adapter is ClientAmpControlPlane
 * (@aws-sdk/client-amp); the twin serves the same API, so the same adapter runs against it with an endpoint override.
 */

/** AMP workspace ids are "ws-" and a UUID (AMP API reference, CreateWorkspace response). */
export const AMP_WORKSPACE_ID = /^ws-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Which alerting resource of the workspace: one rule groups namespace, or the workspace's Alertmanager definition. */
export type AmpAlertingResource =
  { readonly kind: 'ruleGroupsNamespace'; readonly name: string } | { readonly kind: 'alertManagerDefinition' };

/**
 * AMP's status codes for both resources (RuleGroupsNamespaceStatusCode, AlertManagerDefinitionStatusCode): a
 * resource may be changed again only once it is ACTIVE or failed.
 */
export const AMP_STATUS = {
  creating: 'CREATING',
  active: 'ACTIVE',
  updating: 'UPDATING',
  deleting: 'DELETING',
  creationFailed: 'CREATION_FAILED',
  updateFailed: 'UPDATE_FAILED',
} as const;
export type AmpStatusCode = (typeof AMP_STATUS)[keyof typeof AMP_STATUS];
export const AMP_STATUS_CODES: readonly AmpStatusCode[] = Object.values(AMP_STATUS);

/** The statuses AMP is still working in: wait, do not change. */
export const AMP_TRANSITIONAL_STATUSES: readonly AmpStatusCode[] = [
  AMP_STATUS.creating,
  AMP_STATUS.updating,
  AMP_STATUS.deleting,
];
/** The statuses of a create or update AMP refused; `reason` says why. */
export const AMP_FAILED_STATUSES: readonly AmpStatusCode[] = [AMP_STATUS.creationFailed, AMP_STATUS.updateFailed];

/** A resource's status, with AMP's `statusReason` when it gives one (always, for a failure). */
export interface AmpResourceStatus {
  code: AmpStatusCode;
  reason?: string;
}

/** What AMP holds for a resource: its data (the YAML uploaded, decoded) and its status. */
export interface AmpResourceDescription {
  data: string;
  status: AmpResourceStatus;
}

/** Per call: an abort signal (the invocation's deadline). */
export interface AmpCallOptions {
  signal?: AbortSignal;
}

/** The calls on one workspace's alerting resources. Errors are AmpAlertingError subclasses (errors.ts). */
export interface AmpAlertingControlPlane {
  /** The workspace every call addresses (`ws-...`). */
  readonly workspaceId: string;
  /** What AMP holds for `resource`, or null when the workspace has none. */
  describe(resource: AmpAlertingResource, options?: AmpCallOptions): Promise<AmpResourceDescription | null>;
  /** Creates `resource` with `data` (YAML); AMP answers with the status it starts in (CREATING). */
  create(resource: AmpAlertingResource, data: string, options?: AmpCallOptions): Promise<AmpResourceStatus>;
  /** Replaces the data of an existing `resource`; AMP answers with the status it starts in (UPDATING). */
  put(resource: AmpAlertingResource, data: string, options?: AmpCallOptions): Promise<AmpResourceStatus>;
  /** Deletes `resource`; resolves as well when there is none. */
  delete(resource: AmpAlertingResource, options?: AmpCallOptions): Promise<void>;
}

/** How a resource is named in logs, reasons and errors: `rule groups namespace vllm-eks-pilot-prod`. */
export function describeAmpResource(resource: AmpAlertingResource): string {
  return resource.kind === 'ruleGroupsNamespace' ? `rule groups namespace ${resource.name}` : 'Alertmanager definition';
}
