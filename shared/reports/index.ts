// face (generated)
export * from './S3ReportStore.js';
export * from './errors.js';
export * from './reportKey.js';
export * from './types.js';
