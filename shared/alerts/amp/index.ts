/**
 * The AMP engine: the port to AMP's alerting control plane, its @aws-sdk/client-amp adapter, the desired rule groups
 * namespace and Alertmanager definition (from the one rule source), and the installer that keeps them in step.
 */
export {
  AMP_FAILED_STATUSES,
  AMP_STATUS,
  AMP_STATUS_CODES,
  AMP_TRANSITIONAL_STATUSES,
  AMP_WORKSPACE_ID,
  describeAmpResource,
  type AmpAlertingControlPlane,
  type AmpAlertingResource,
  type AmpCallOptions,
  type AmpResourceDescription,
  type AmpResourceStatus,
  type AmpStatusCode,
} from './AmpAlertingControlPlane.js';
export { ClientAmpControlPlane, type ClientAmpControlPlaneOptions } from './ClientAmpControlPlane.js';
export {
  ampDataDigest,
  desiredAmpAlerting,
  type DesiredAmpAlerting,
  type DesiredAmpAlertingOptions,
} from './desiredAmpAlerting.js';
export {
  AmpAlertingError,
  AmpAlertingInstallFailedError,
  AmpAnswerInvalidError,
  AmpRequestError,
  AmpResourceFailedError,
  AmpResourceWaitTimeoutError,
} from './errors.js';
export {
  AMP_INSTALL_ACTIONS,
  AMP_INSTALL_DEFAULTS,
  decideAmpInstall,
  installAmpAlerting,
  removeAmpAlerting,
  type AmpInstallAction,
  type AmpInstallDecision,
  type AmpInstallOptions,
  type AmpInstallResult,
  type AmpRemoveOutcome,
  type AmpResourceOutcome,
} from './installAmpAlerting.js';
export { sameAmpData } from './sameAmpData.js';
