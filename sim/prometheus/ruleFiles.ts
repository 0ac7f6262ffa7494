import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
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

/**
 * Rule files installed while Prometheus runs (the twin's AMP rule groups namespaces): one file per namespace in one
 * directory, which the config loads with a glob, so a namespace comes and goes with a file and a reload.
 */
const NAMESPACE_EXTENSION = '.rules.yaml';
/** AMP's rule groups namespace name (CreateRuleGroupsNamespace: 1-64 of `[0-9A-Za-z][-.0-9A-Z_a-z]*`). */
const NAMESPACE_NAME = /^[0-9A-Za-z][-.0-9A-Z_a-z]{0,63}$/;

/** The `rule_files` entry that loads every namespace of `dir`. */
export function ruleNamespaceGlob(dir: string): string {
  return join(dir, `*${NAMESPACE_EXTENSION}`);
}

/**
 * Writes (or, with `text` undefined, removes) the rule file of namespace `name` in `dir`; resolves to the text it
 * held before (undefined: none), so a caller can put it back when Prometheus refuses the new one.
 */
export async function writeRuleNamespace(
  dir: string,
  name: string,
  text: string | undefined,
): Promise<string | undefined> {
  if (!NAMESPACE_NAME.test(name))
    throw new PrometheusConfigError('name', name, 'must be 1-64 of [0-9A-Za-z][-.0-9A-Z_a-z]* (an AMP namespace name)');
  const path = join(dir, `${name}${NAMESPACE_EXTENSION}`);
  const previous = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (text === undefined) {
    await rm(path, { force: true });
  } else {
    // Whole or not at all: Prometheus may re-read the directory at any time (a reload for another namespace).
    const partial = `${path}.${process.pid}.tmp`;
    await writeFile(partial, text);
    await rename(partial, path);
  }
  return previous;
}
