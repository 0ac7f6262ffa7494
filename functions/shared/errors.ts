/**
 * Errors shared by the Lambda entries. Each sets `name` (what the logs and Step Functions match on) and says
 * whether a retry could succeed.
 */

/** The invocation reached its deadline guard: work not yet started is refused, work under way is aborted. */
export class LambdaDeadlineError extends Error {
  override readonly name = 'LambdaDeadlineError';
  /** Another invocation has its own time: a retry can succeed. */
  readonly retryable = true;

  constructor(
    readonly budgetMs: number,
    readonly marginMs: number,
  ) {
    super(
      `the invocation's deadline passed: ${budgetMs} ms of work allowed, ${marginMs} ms kept before Lambda's timeout`,
    );
  }
}
