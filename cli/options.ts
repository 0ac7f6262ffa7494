import { InvalidArgumentError } from 'commander';

/** Commander parser for a number > 0; the message says what is accepted. */
export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`expected a number > 0, got "${value}"`);
  return n;
}

/** Commander parser for an integer >= 1. */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`expected an integer >= 1, got "${value}"`);
  return n;
}

/** Commander parser for a comma-separated list of numbers > 0, e.g. `10,20,40`. */
export function positiveNumberList(value: string): number[] {
  return value.split(',').map((part) => positiveNumber(part.trim()));
}

/** Prints data as JSON (for `--json`) with a trailing newline. */
export function printJson(data: unknown): void {
  process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
}
