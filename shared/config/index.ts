// face (generated)
export * from './awsFormats.js';
export * from './environment.js';
export * from './errors.js';
export * from './targets.js';
export * from './zodIssues.js';
