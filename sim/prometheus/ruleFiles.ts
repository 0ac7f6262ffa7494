import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PrometheusConfigError } from './errors.js';

/** A plain file name: no directories, so a rule file cannot be written outside the data directory. */
const RULE_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Writes each rule file into `dir`; returns their absolute paths (a bad file name is refused, naming it). */
export async function writeRuleFiles(dir: string, contents: Readonly<Record<string, string>>): Promise<string[]> {
  const names = Object.keys(contents);
  if (names.length === 0) return [];
  await mkdir(dir);
  const paths: string[] = [];
  for (const name of names) {
    if (!RULE_FILE_NAME.test(name))
      throw new PrometheusConfigError(
        'ruleFileContents',
        name,
        'must be keyed by plain file names: 1-128 letters, digits, ".", "_" or "-"',
      );
    const path = join(dir, name);
    await writeFile(path, contents[name] ?? '');
    paths.push(path);
  }
  return paths;
}
