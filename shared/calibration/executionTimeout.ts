/**
 * The calibration state machine's TimeoutSeconds (statemachines/calibration.asl.json; a test keeps them equal): no
 * execution runs longer, so a lease taken at its start expires when the execution surely ended.
 */
export const EXECUTION_TIMEOUT_SECONDS = 21_600;
