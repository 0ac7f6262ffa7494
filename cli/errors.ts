/**
 * Errors of the command line itself. Each sets `name` and has a one-line message that starts with the flag (or the
 * file and position) the user wrote; cli/main.ts prints it as the only line on stderr.
 */

/** A file named by a flag cannot be read or is not YAML/JSON: `--alerts a.yaml:3:7: Map keys must be unique`. */
export class CliFileInvalidError extends Error {
  override readonly name = 'CliFileInvalidError';

  constructor(
    readonly flag: string,
    readonly path: string,
    readonly reason: string,
    readonly position?: { line: number; column: number },
    options?: ErrorOptions,
  ) {
    super(`${flag} ${path}${position === undefined ? '' : `:${position.line}:${position.column}`}: ${reason}`, options);
  }
}

/** A flag's value is refused: `--rate-window "0s": expected a positive PromQL duration ...`. */
export class CliOptionInvalidError extends Error {
  override readonly name = 'CliOptionInvalidError';

  constructor(
    readonly flag: string,
    readonly value: string,
    readonly expected: string,
    options?: ErrorOptions,
  ) {
    super(`${flag} ${JSON.stringify(value)}: expected ${expected}`, options);
  }
}

/** A flag the command needs in this mode was not given: `--amp-workspace is required: the AMP workspace id ...`. */
export class CliOptionRequiredError extends Error {
  override readonly name = 'CliOptionRequiredError';

  constructor(
    readonly flag: string,
    readonly expected: string,
  ) {
    super(`${flag} is required: ${expected}`);
  }
}
