// face (generated)
export * from './errors.js';
export * from './kinds.js';
export * from './pause.js';
export * from './scaledObjectManifest.js';
export * from './thresholds.js';
export * from './triggerAuthenticationManifest.js';
export * from './triggerKinds.js';
export * from './triggers.js';
export * from './update.js';
