/**
 * The local harness (sim/harness), loaded when a command first needs the twin: `--help`, option errors and the
 * commands that never touch the twin do not pay for loading it (the twin, Prometheus, the AWS SDKs: seconds).
 */
export const harness = () => import('../sim/harness/index.js');
