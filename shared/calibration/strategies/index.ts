/** The calibration strategies (one file each, one registry): the next load step from the steps measured so far. */
export { linearStrategy } from './linear.js';
export { STRATEGIES } from './registry.js';
export type { CalibrationStrategy } from './types.js';
