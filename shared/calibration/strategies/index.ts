// face (generated)
export * from './adaptive.js';
export * from './linear.js';
export * from './registry.js';
export * from './types.js';
