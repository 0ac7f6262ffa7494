// face (generated)
export * from './ampClient.js';
export * from './catalog.js';
export * from './errors.js';
export * from './names.js';
export * from './promql.js';
export * from './readCatalog.js';
export * from './rulesClient.js';
export * from './types.js';
