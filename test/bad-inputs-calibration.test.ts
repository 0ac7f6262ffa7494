import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CalibrationInputInvalidError, parseCalibrationInput } from '../shared/calibration/index.js';
import { CLI_TEST_TIMEOUT_MS, runCli } from './helpers/cli.js';
import { ROOT } from './helpers/imports.js';

// The bad-input corpus of the calibration (test/bad-inputs/README.md): every case refused in one line naming its field.

jest.setTimeout(CLI_TEST_TIMEOUT_MS);

/** Commander's hint after a usage error; the reason itself must still fit on one line. */
const USAGE_HINT = '(run with --help for usage)';

/** A valid input that names its target in full (no twin fills it in). */
const BASE = {
  target: {
    cluster: 'ai-eks',
    region: 'us-east-2',
    namespace: 'default',
    deployment: 'vllm-inference-app',
    model: 'meta-llama/Llama-3.1-8B-Instruct',
    ampWorkspaceUrl: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1234',
  },
};

interface InputCase {
  case: string;
  input: Record<string, unknown>;
  field: string;
  says?: string;
}
interface CliCase {
  case: string;
  args: string[];
  field: string;
}

async function table<T>(file: string): Promise<T[]> {
  return parseYaml(await readFile(join(ROOT, 'test', 'bad-inputs', file), 'utf8')) as T[];
}

/** Objects merged key by key; lists and values replaced. */
function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = merge(base[key], value);
  return out;
}
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const inputCases = await table<InputCase>('calibration-input.yaml');
const cliCases = await table<CliCase>('cli-calibrate.yaml');

describe('Corpus: calibration input (test/bad-inputs/calibration-input.yaml)', () => {
  it('the base input is accepted, and the corpus has at least 30 cases', () => {
    expect(() => parseCalibrationInput(BASE)).not.toThrow();
    expect(inputCases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(inputCases.map((c) => [c.case, c] as const))('%s', (_name, c) => {
    // Prepare
    const input = merge(BASE, c.input);

    // Act
    let refused: unknown;
    try {
      parseCalibrationInput(input);
    } catch (error) {
      refused = error;
    }

    // Assess
    expect(refused).toBeInstanceOf(CalibrationInputInvalidError);
    const message = (refused as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toContain(`${c.field}: `);
    if (c.says !== undefined) expect(message).toContain(c.says);
  });
});

describe('Corpus: vllm-pilot calibrate arguments (test/bad-inputs/cli-calibrate.yaml)', () => {
  let dir: string;
  const good = { ...BASE, plan: { rates: [10, 20] } };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bad-inputs-cli-'));
    await writeFile(join(dir, 'good.yaml'), JSON.stringify(good));
    await writeFile(join(dir, 'existing.txt'), 'not a folder\n');
    await mkdir(join(dir, 'done'));
    await writeFile(join(dir, 'done', 'report.json'), '{}\n');
    await writeFile(join(dir, 'broken.yaml'), 'plan:\n  rates: [10, 20\ntestReplicas: 1\n');
    await writeFile(join(dir, 'dup.json'), '{"testReplicas": 1, "testReplicas": 2}\n');
    await writeFile(join(dir, 'list.yaml'), '- 1\n- 2\n');
    await writeFile(join(dir, 'huge.yaml'), JSON.stringify({ ...good, testReplicas: 1_000_000 }));
  });

  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('has at least 6 cases', () => {
    expect(cliCases.length).toBeGreaterThanOrEqual(6);
  });

  it.each(cliCases.map((c) => [c.case, c] as const))('%s', async (_name, c) => {
    // Prepare
    const before = await listing(dir);
    const reportsBefore = await reportFolders();

    // Act
    const result = await runCli(c.args.map((arg) => arg.replaceAll('$DIR', dir)));

    // Assess
    expect(result.code).not.toBe(0);
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '' && line.trim() !== USAGE_HINT);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(c.field);
    expect(await listing(dir)).toEqual(before);
    expect(await reportFolders()).toEqual(reportsBefore);
  });
});

/** The default report folders (`./calibration-<execution>`) in the clone, where the CLI runs. */
async function reportFolders(): Promise<string[]> {
  return (await readdir(ROOT)).filter((name) => name.startsWith('calibration-')).sort();
}

/** Every path under `dir`, sorted. */
async function listing(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).sort();
}
