// face (generated)
export * from './configMaps.js';
export * from './dashboards.js';
export * from './errors.js';
export * from './grafanaJson.js';
export * from './panels.js';
export * from './tier1Service.js';
export * from './tier2Engine.js';
export * from './tier3Gpu.js';
export * from './types.js';
export * from './variables.js';
