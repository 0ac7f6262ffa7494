/**
 * Errors of the config module. Every class extends `ConfigError` and sets `name` (Step Functions `Retry`/`Catch`
 * match on it). Configuration errors are never retryable: the same input fails the same way.
 */

/** One problem found in a configuration: where (`targets[1].namespace`, `AMP_WORKSPACE_URL`) and what. */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** Base class of every error raised by `shared/config`. */
export class ConfigError extends Error {
  readonly retryable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/** A configuration (targets list, environment) failed validation; `issues` names every bad field. */
export class ConfigInvalidError extends ConfigError {
  /** What was being read, e.g. `targets` or `environment`. */
  readonly source: string;
  readonly issues: ConfigIssue[];

  constructor(source: string, issues: ConfigIssue[], options?: { cause?: unknown }) {
    super(`invalid ${source}: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`, options);
    this.name = 'ConfigInvalidError';
    this.source = source;
    this.issues = issues;
  }
}
