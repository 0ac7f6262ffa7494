/**
 * The faults the twin can inject (its control endpoint's kinds), on their own: the CLI lists them in `--help`
 * without loading the twin.
 */
export { FAULT_KINDS, type FaultKind } from '../twin/faults.js';
