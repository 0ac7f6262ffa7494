/** The alert state: the DynamoDB adapter of the AlertStateStore port and its table. */
export { DynamoDbAlertStateStore } from './DynamoDbAlertStateStore.js';
export { ALERT_STATE_KEY, ALERT_STATE_TABLE } from './table.js';
