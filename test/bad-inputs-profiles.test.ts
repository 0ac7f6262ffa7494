import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { loadProfile } from '../sim/harness/index.js';
import { CLI_TEST_TIMEOUT_MS, startCli, type CliResult } from './helpers/cli.js';
import { ROOT } from './helpers/imports.js';

// The bad-input corpus of twin profiles (test/bad-inputs/profiles.yaml): `vllm-pilot twin up --profile FILE` refuses
// each in exactly one line naming the field, before anything starts: no Prometheus, no replicas, no state file.

jest.setTimeout(CLI_TEST_TIMEOUT_MS);

interface ProfileCase {
  case: string;
  file: string;
  /** The file's text; absent: the file is not written. */
  profile?: string;
  field: string;
  says?: string;
}

const { cases } = parseYaml(await readFile(join(ROOT, 'test', 'bad-inputs', 'profiles.yaml'), 'utf8')) as {
  cases: ProfileCase[];
};

/** A profile the corpus's cases each break in one place: the twin would start from it. */
const CONTROL = 'extends: demo\nreplicas: 3\nkarpenter:\n  gpuLimit: 3\n';

/**
 * A backstop only: a twin that starts instead of refusing is stopped at its first `twin:` line. Not a bound on the
 * refusal's time: under a loaded CI run, 5 CLI cold starts at once took over 30 s, and a 30 s stop failed real refusals.
 */
const REFUSAL_MS = CLI_TEST_TIMEOUT_MS - 10_000;

/** The lines that state a problem (stderr without blank lines). */
const lines = (text: string): string[] => text.split('\n').filter((line) => line.trim() !== '');

/** Neither a stack frame nor a YAML code frame (a line of spaces and a caret). */
const NOT_A_FRAME = /^(?!\s+at )(?!\s*\^\s*$)/;

/**
 * Runs `twin up`; should it start a twin instead of refusing (its first `twin:` log line, or no exit by REFUSAL_MS),
 * stops it with SIGINT, as Ctrl-C does, so Prometheus and the state file are cleaned up and the case fails on its
 * output rather than hanging.
 */
function twinUp(args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = startCli(['twin', 'up', ...args]);
    let stdout = '';
    let stderr = '';
    const stop = () => child.kill('SIGINT');
    const timer = setTimeout(stop, REFUSAL_MS);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (/^twin: /m.test(stderr)) stop();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('Corpus: test/bad-inputs/profiles.yaml', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bad-profiles-'));
    await writeFile(join(dir, 'control.yaml'), CONTROL);
    await Promise.all(
      cases.flatMap(({ file, profile }) => (profile === undefined ? [] : [writeFile(join(dir, file), profile)])),
    );
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('holds at least 12 cases, one file each, and the profile they break loads', async () => {
    // Assess
    expect(cases.length).toBeGreaterThanOrEqual(12);
    expect(new Set(cases.map((c) => c.file)).size).toBe(cases.length);
    await expect(loadProfile(join(dir, 'control.yaml'))).resolves.toMatchObject({ replicas: 3 });
  });

  it.concurrent.each(cases.map((c, i) => ({ ...c, i })))(
    'refuses $case in one line naming $field, and starts nothing',
    async ({ file, field, says, i }) => {
      // Prepare
      const stateFile = join(dir, `state-${i}.json`);

      // Act
      const result = await twinUp(['--profile', join(dir, file), '--state-file', stateFile]);

      // Assess
      const stderr = lines(result.stderr);
      expect(stderr).toHaveLength(1);
      expect(stderr[0]).toMatch(/^vllm-pilot: Profile\w*Error: /);
      expect(stderr[0]).toMatch(NOT_A_FRAME);
      expect(stderr[0]).toContain(field.replaceAll('{dir}', dir));
      if (says !== undefined) expect(stderr[0]).toContain(says);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(existsSync(stateFile)).toBe(false);
      expect((await readdir(dir)).filter((name) => name.startsWith(`state-${i}.`))).toEqual([]);
    },
  );
});
