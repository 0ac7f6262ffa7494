/**
 * An execution's failure as the CLI reports it: an error named as the execution's (`CalibrationJobFailedError`,
 * `States.Timeout`, ...) whose message is the first line of its cause, so it prints as one line.
 */
export function executionFailure(error: string, cause: string): Error {
  const failure = new Error(`calibration failed: ${causeMessage(cause).split('\n')[0] ?? ''}`);
  failure.name = error;
  return failure;
}

/** A Lambda error's Cause is JSON (`{"errorType", "errorMessage", "trace"}`); a local one is the message. */
export function causeMessage(cause: string): string {
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // Not JSON: the cause is the message itself.
  }
  return cause;
}
