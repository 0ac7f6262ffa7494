import { readFile } from 'node:fs/promises';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { CliFileInvalidError } from './errors.js';

/**
 * Reads the YAML or JSON file a flag names (YAML is a superset of JSON: one parser, and duplicate keys are refused in
 * both). Fails with one line naming the flag, the file, the line and column, and what is wrong; never a code frame.
 */
export async function readStructuredFile(flag: string, path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new CliFileInvalidError(flag, path, `cannot read it (${e.code ?? e.message})`, undefined, { cause: error });
  }
  try {
    return parseYaml(text);
  } catch (error) {
    throw yamlError(flag, path, error);
  }
}

/** Like readStructuredFile, for a file that must hold one mapping (an empty file is an empty one). */
export async function readStructuredObject(flag: string, path: string): Promise<Record<string, unknown>> {
  const value = await readStructuredFile(flag, path);
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new CliFileInvalidError(flag, path, `must hold one mapping of fields, not ${describe(value)}`);
  return value as Record<string, unknown>;
}

/** The parser's error as one line: `what` without the "at line L, column C:" tail and the code frame after it. */
function yamlError(flag: string, path: string, error: unknown): CliFileInvalidError {
  if (!(error instanceof YAMLParseError)) {
    const what = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
    return new CliFileInvalidError(flag, path, `not YAML or JSON: ${what}`, undefined, { cause: error });
  }
  const what = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
  const at = error.linePos?.[0];
  return new CliFileInvalidError(
    flag,
    path,
    `not YAML or JSON: ${what}`,
    at === undefined ? undefined : { line: at.line, column: at.col },
    { cause: error },
  );
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value} (${JSON.stringify(value)})`;
}
