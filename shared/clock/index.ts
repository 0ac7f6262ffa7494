// face (generated)
export * from './clock.js';
