// face (generated)
export * from './alertState.js';
export * from './buildMessage.js';
export * from './decide.js';
export * from './errors.js';
export * from './fingerprint.js';
export * from './format.js';
export * from './group.js';
export * from './heldFor.js';
export * from './message.js';
export * from './pipelineErrors.js';
export * from './publisher.js';
export * from './runAlertCycle.js';
export * from './types.js';
