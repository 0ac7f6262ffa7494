/** Base class of the twin's errors. */
export class TwinError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TwinError';
  }
}

/** The state file is missing, unreadable, invalid, or was written by a twin that has stopped. */
export class TwinStateFileError extends TwinError {
  constructor(
    readonly path: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`twin state file ${path}: ${reason}`, options);
    this.name = 'TwinStateFileError';
  }
}

/** The twin did not become ready (a replica did not load, Prometheus did not scrape every target). */
export class TwinStartError extends TwinError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TwinStartError';
  }
}

/** Base class of the errors raised while finding, reading and validating a twin profile. */
export class ProfileError extends TwinError {
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

/** A fault request the twin cannot carry out as given: `field` names what is wrong. */
export class TwinFaultInvalidError extends TwinError {
  constructor(
    readonly field: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(`fault: ${field}: ${problem}`, options);
    this.name = 'TwinFaultInvalidError';
  }
}

/** The Pod named in a fault request is not a running vLLM Pod (or none is Ready); `pods` lists the ones there are. */
export class TwinFaultPodNotFoundError extends TwinError {
  constructor(
    readonly pod: string | undefined,
    readonly pods: readonly string[],
  ) {
    const known = pods.length === 0 ? 'there is none' : `the Pods are ${pods.join(', ')}`;
    super(
      pod === undefined
        ? `fault: no vLLM Pod is Ready to take a fault (${known})`
        : `fault: pod ${JSON.stringify(pod)} is not a running vLLM Pod (${known})`,
    );
    this.name = 'TwinFaultPodNotFoundError';
  }
}
