/** The guide's eleven production double-checks (one file each, one registry) and the run of them for a target. */
export { runPreflight } from './runPreflight.js';
