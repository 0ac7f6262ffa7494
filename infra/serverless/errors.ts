/**
 * Errors of the stack builder (infra/serverless). Every class extends `StackError` and sets `name`; osls prints the
 * message when `osls package` or `osls deploy` refuses the stage parameters, before anything reaches AWS.
 */

/** One problem found in the stage parameters: which parameter (`targets[1].cluster`) and what was wrong. */
export interface StackSettingsIssue {
  path: string;
  message: string;
}

/** Base class of every error raised while building the stack. */
export class StackError extends Error {
  /** A bad parameter fails the same way every time. */
  readonly retryable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StackError';
  }
}

/** The stage parameters (`params:` in serverless.yml or `--param`) failed validation; `issues` names each one. */
export class StackSettingsInvalidError extends StackError {
  readonly issues: readonly StackSettingsIssue[];

  constructor(issues: readonly StackSettingsIssue[], options?: { cause?: unknown }) {
    super(`invalid stage parameters: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`, options);
    this.name = 'StackSettingsInvalidError';
    this.issues = issues;
  }
}
