// face (generated)
export * from './definition.js';
export * from './errors.js';
export * from './localHandlers.js';
export * from './promiseWithResolvers.js';
export * from './runStateMachineLocally.js';
export * from './snsPublish.js';
export * from './startExecutionSync.js';
export * from './substitute.js';
export * from './types.js';
