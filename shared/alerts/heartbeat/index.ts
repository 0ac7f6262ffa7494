/** The evaluator's heartbeat: what each cycle records, where (DynamoDB, CloudWatch), and who reads it (preflight). */
export { DynamoDbHeartbeatStore, HEARTBEAT_KEY } from './DynamoDbHeartbeatStore.js';
export {
  HEARTBEAT_ALARM,
  HEARTBEAT_METRIC,
  heartbeatAlarmProperties,
  heartbeatDatum,
  heartbeatOf,
  type EvaluatorHeartbeat,
  type HeartbeatAlarmOptions,
  type HeartbeatBeat,
  type HeartbeatStore,
  type HeartbeatTargetProblem,
} from './heartbeat.js';
