/** Every target's drift check failed in one invocation (the Lambda Errors metric and its alarm see it). */
export class DriftDetectorAllTargetsFailedError extends Error {
  constructor(readonly failures: readonly string[]) {
    super(`every target's drift check failed: ${failures.join('; ')}`);
    this.name = 'DriftDetectorAllTargetsFailedError';
  }
}

/** The invocation event is not an EventBridge scheduled event. */
export class DriftDetectorEventInvalidError extends Error {
  constructor(readonly issues: readonly string[]) {
    super(`invalid event: ${issues.join('; ')}; accepted: an EventBridge scheduled event`);
    this.name = 'DriftDetectorEventInvalidError';
  }
}
