/** Time: the Clock port and the system clock. */
export { VirtualClock, systemClock, type Clock } from './clock.js';
