/**
 * Writes every generated file under infra/ (`npm run generate:infra`), or with `--check` only reports the ones that
 * differ and exits 1, for CI.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { generatedInfraFiles, REGENERATE_COMMAND } from './generatedFiles.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function current(path: string): Promise<string | undefined> {
  try {
    return await readFile(`${ROOT}${path}`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const check = argv.includes('--check');
  const stale: string[] = [];
  for (const file of await generatedInfraFiles()) {
    if ((await current(file.path)) === file.content) continue;
    stale.push(file.path);
    if (!check) await writeFile(`${ROOT}${file.path}`, file.content);
  }
  if (check && stale.length > 0) {
    console.error(`out of date: ${stale.join(', ')}; regenerate with: ${REGENERATE_COMMAND}`);
    return 1;
  }
  console.log(stale.length === 0 ? 'infra/: every generated file is up to date' : `wrote ${stale.join(', ')}`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
