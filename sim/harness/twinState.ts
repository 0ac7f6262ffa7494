/**
 * A running twin's state file (`vllm-pilot twin up --state-file`), on its own: commands that only read it (a fault,
 * a metrics read) do not load the twin.
 */
export { readTwinState, type TwinState } from '../twin/stateFile.js';
