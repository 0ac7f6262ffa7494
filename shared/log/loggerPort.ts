/**
 * The logging the domain needs: a message and records of fields, at four levels. Powertools' Logger fits it (the
 * Lambdas pass theirs); tests and quiet CLI runs pass silentLogger.
 */
export interface LoggerPort {
  debug(message: string, ...fields: Array<Record<string, unknown>>): void;
  info(message: string, ...fields: Array<Record<string, unknown>>): void;
  warn(message: string, ...fields: Array<Record<string, unknown>>): void;
  error(message: string, ...fields: Array<Record<string, unknown>>): void;
}

/** A logger that drops everything. */
export const silentLogger: LoggerPort = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
