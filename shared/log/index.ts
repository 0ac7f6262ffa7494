// face (generated)
export * from './loggerPort.js';
