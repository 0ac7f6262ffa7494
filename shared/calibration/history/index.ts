// face (generated)
export * from './DynamoDbHistoryStore.js';
export * from './errors.js';
export * from './historyTargetKey.js';
export * from './table.js';
export * from './types.js';
