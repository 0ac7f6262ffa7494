// face (generated)
export * from './DynamoDbAlertStateStore.js';
export * from '../testing/fixtures.js';
export * from './table.js';
