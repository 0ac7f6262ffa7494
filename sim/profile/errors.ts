/** Errors of finding, reading and validating a twin profile. */

/** Base class of the errors raised while finding, reading and validating a twin profile. */
export class ProfileError extends Error {
  /** The built-in name or file path that was asked for. */
  readonly source: string;

  constructor(message: string, source: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProfileError';
    this.source = source;
  }
}

/** No built-in profile has that name, or the file does not exist. */
export class ProfileNotFoundError extends ProfileError {
  readonly builtIns: readonly string[];

  constructor(message: string, source: string, builtIns: readonly string[], options?: { cause?: unknown }) {
    super(message, source, options);
    this.name = 'ProfileNotFoundError';
    this.builtIns = builtIns;
  }
}

/** The file is not valid YAML/JSON, or not a mapping at its top level. */
export class ProfileParseError extends ProfileError {
  constructor(message: string, source: string, options?: { cause?: unknown }) {
    super(message, source, options);
    this.name = 'ProfileParseError';
  }
}

/** One problem found while validating a profile: the field path (`engine.maxNumSeqs`) and what was wrong. */
export interface ProfileIssue {
  path: string;
  message: string;
}

/** The profile (after `extends` merging) does not match the schema; `issues` lists every problem. */
export class ProfileInvalidError extends ProfileError {
  readonly issues: readonly ProfileIssue[];

  constructor(source: string, issues: readonly ProfileIssue[], options?: { cause?: unknown }) {
    // One line, so the CLI's one-line error shows every problem.
    super(`Profile ${source} is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, source, options);
    this.name = 'ProfileInvalidError';
    this.issues = issues;
  }
}
