/**
 * The local harness: start a twin (or one of its parts) and connect the product to it, exactly as on AWS but for
 * the endpoints. The CLI's twin commands, the benches and the tests reach the twin only through this face.
 */

// The twin and what drives it.
export { startTwin } from '../twin/twin.js';
export {
  credentialsOf,
  TWIN_CLUSTER,
  TWIN_CREDENTIALS,
  TWIN_IDENTITIES,
  TWIN_REGION,
  TWIN_RESOURCES,
  type TwinIdentity,
} from '../twin/constants.js';
export type { StartTwinOptions, Twin } from '../twin/twin.js';
export * from './twinState.js';
export { BUILT_IN_PROFILES, loadProfile, validateProfile } from '../profile/loadProfile.js';
export type { Profile, ProfileInput, VllmVersion } from '../profile/profile.js';
export { FAULT_KINDS, FAULT_LOAD_SHAPE, type ActiveFault, type FaultKind, type FaultRequest } from '../twin/faults.js';
export {
  measureCapacity,
  measureLatency,
  type CapacityResult,
  type LatencyResult,
  type RequestShape,
} from '../vllm/capacity.js';
export { engineConfigFromProfile, VllmEngine } from '../vllm/engine.js';
export {
  buildPrompt,
  runConstantArrivalLoad,
  type ConstantArrivalOptions,
  type LoadSummary,
} from '../load/constantArrival.js';
export { sampleRequestAt } from '../mix/sampler.js';

// Parts of the twin on their own, for the adapters' tests: its AWS endpoints, Slack, API server, Prometheus.
export { startCloudWatchTwin, type CloudWatchTwin, type RecordedDatum } from '../aws/cloudwatch.js';
export { startDynamoDbTwin, type DynamoDbTwin } from '../aws/dynamodb.js';
export { startEksTwin, type EksTwin } from '../aws/eks.js';
export { startSecretsManagerTwin, type SecretsManagerTwin } from '../aws/secretsManager.js';
export { startSnsTwin, type RecordedMessage, type SnsTwin } from '../aws/sns.js';
export { startSlackWebhookSink, type SlackDelivery, type SlackWebhookSink } from '../slack/webhookSink.js';
export { startKubeApiServer, type KubeApiServer, type KubeAuditEvent } from '../kube/server/index.js';
export { MemoryPodLogStore } from '../kube/logs.js';
export { MemoryObjectStore } from '../kube/store.js';
export { ensurePrometheus } from '../prometheus/ensurePrometheus.js';
export type { PrometheusInstallation } from '../prometheus/locatePrometheus.js';
export { startPrometheus, type PrometheusInstance } from '../prometheus/startPrometheus.js';

// The product's functions and state machine on the twin.
export * from './alerts.js';
export * from './calibration.js';
export * from './drift.js';
export * from './collector.js';
export * from './lambda.js';
export * from './preflight.js';
export * from './twinTarget.js';

// What-if replay on the virtual clock (the twin's engine, KEDA and HPA algorithms; no twin started).
export * from '../whatif/index.js';
export * from './whatif.js';
export {
  ensurePromiseWithResolvers,
  type LocalRun,
  type LocalTaskHandler,
  type WorkflowEvent,
  type WorkflowOutcome,
} from '../stepfunctions/index.js';
