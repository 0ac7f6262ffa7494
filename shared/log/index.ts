/** Logging: the LoggerPort the domain logs through. */
export { silentLogger, type LoggerPort } from './loggerPort.js';
