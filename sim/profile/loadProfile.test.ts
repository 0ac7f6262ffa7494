import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUILT_IN_PROFILES, loadProfile, validateProfile } from './loadProfile.js';
import { ProfileInvalidError, ProfileNotFoundError, ProfileParseError } from './errors.js';

let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'vllm-twin-profiles-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeProfile(name: string, content: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, content);
  return file;
}

async function failure(nameOrPath: string): Promise<Error> {
  try {
    await loadProfile(nameOrPath);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`loadProfile(${nameOrPath}) did not fail`);
}

describe('Function: loadProfile', () => {
  it.each([
    { case: 'demo', name: 'demo', replicas: 2, vllmVersion: '0.11', scrape: 1 },
    { case: 'ministral-8b-l40s', name: 'ministral-8b-l40s', replicas: 1, vllmVersion: 'latest', scrape: 30 },
  ])('loads the built-in profile $case', async ({ name, replicas, vllmVersion, scrape }) => {
    // Act
    const profile = await loadProfile(name);

    // Assess
    expect(profile).toMatchObject({ name, replicas, vllmVersion, prometheus: { scrapeIntervalSeconds: scrape } });
    expect(profile.model).toBe('mistralai/Ministral-3-8B-Instruct-2512');
    expect(profile.gpu).toMatchObject({ model: 'NVIDIA L40S', memoryMiB: 46068, gpuMemoryUtilization: 0.9 });
  });

  it.each([
    {
      case: 'YAML',
      file: 'small-batch.yaml',
      content: 'extends: demo\nreplicas: 3\nengine:\n  maxNumSeqs: 8\n',
    },
    {
      case: 'JSON',
      file: 'small-batch.json',
      content: JSON.stringify({ extends: 'demo', replicas: 3, engine: { maxNumSeqs: 8 } }),
    },
  ])('merges a $case file that extends a built-in, keeping the fields it does not set', async ({ file, content }) => {
    // Prepare
    const demo = await loadProfile('demo');
    const target = await writeProfile(file, content);

    // Act
    const profile = await loadProfile(target);

    // Assess
    expect(profile.replicas).toBe(3);
    expect(profile.engine).toEqual({ ...demo.engine, maxNumSeqs: 8 });
    expect(profile.startup).toEqual(demo.startup);
  });

  it('rejects an unknown key, naming the file, the key and the accepted keys', async () => {
    // Prepare
    const file = await writeProfile('typo.yaml', 'extends: demo\nengine:\n  maxNumSeq: 8\n');

    // Act
    const error = await failure(file);

    // Assess
    expect(error).toBeInstanceOf(ProfileInvalidError);
    expect(error.message).toContain(file);
    expect(error.message).toContain('engine: unknown key "maxNumSeq"');
    expect(error.message).toContain('accepted: maxNumSeqs, kvCacheBlocks');
  });

  it.each([
    { case: 'a negative integer', yaml: 'engine:\n  maxNumSeqs: -4\n', path: 'engine.maxNumSeqs', got: 'got -4' },
    {
      case: 'a string for a number',
      yaml: 'startup:\n  warmupSlowdown: fast\n',
      path: 'startup.warmupSlowdown',
      got: 'got "fast"',
    },
    { case: 'an unknown vLLM version', yaml: "vllmVersion: '0.10'\n", path: 'vllmVersion', got: 'got "0.10"' },
  ])('rejects $case, naming the field path and the value', async ({ yaml, path: fieldPath, got }) => {
    // Prepare
    const file = await writeProfile('bad-value.yaml', `extends: demo\n${yaml}`);

    // Act
    const error = await failure(file);

    // Assess
    expect(error).toBeInstanceOf(ProfileInvalidError);
    expect(error.message).toContain(`${fieldPath}: `);
    expect(error.message).toContain(got);
  });

  it.each([
    { case: 'demo (time-compressed)', name: 'demo', amp: { ingestionLagSeconds: 5, ingestionJitterSeconds: 2 } },
    {
      case: 'ministral-8b-l40s (AWS-like)',
      name: 'ministral-8b-l40s',
      amp: { ingestionLagSeconds: 45, ingestionJitterSeconds: 15 },
    },
  ])('gives the built-in profile $case its AMP ingestion lag', async ({ name, amp }) => {
    // Act
    const profile = await loadProfile(name);

    // Assess
    expect(profile.amp).toEqual(amp);
  });

  it.each([
    { case: 'no amp at all', amp: undefined, expected: { ingestionLagSeconds: 0, ingestionJitterSeconds: 0 } },
    {
      case: 'a lag only',
      amp: { ingestionLagSeconds: 10 },
      expected: { ingestionLagSeconds: 10, ingestionJitterSeconds: 0 },
    },
  ])('defaults the AMP lag to none: $case', async ({ amp, expected }) => {
    // Prepare
    const { amp: _builtIn, ...rest } = await loadProfile('demo');

    // Act
    const profile = validateProfile(amp === undefined ? rest : { ...rest, amp }, 'test');

    // Assess
    expect(profile.amp).toEqual(expected);
  });

  it('keeps the built-in jitter when a file extending it sets only the lag', async () => {
    // Prepare
    const file = await writeProfile('lag-only.yaml', 'extends: demo\namp:\n  ingestionLagSeconds: 20\n');

    // Act
    const profile = await loadProfile(file);

    // Assess
    expect(profile.amp).toEqual({ ingestionLagSeconds: 20, ingestionJitterSeconds: 2 });
  });

  it.each([
    { case: 'a negative lag', yaml: 'amp:\n  ingestionLagSeconds: -1\n', text: 'amp.ingestionLagSeconds: ' },
    { case: 'a lag above 300 s', yaml: 'amp:\n  ingestionLagSeconds: 301\n', text: 'amp.ingestionLagSeconds: ' },
    {
      case: 'a jitter above 120 s',
      yaml: 'amp:\n  ingestionJitterSeconds: 121\n',
      text: 'amp.ingestionJitterSeconds: ',
    },
    { case: 'an unknown amp key', yaml: 'amp:\n  lagSeconds: 5\n', text: 'amp: unknown key "lagSeconds"' },
  ])('rejects $case, naming the field', async ({ yaml, text }) => {
    // Prepare
    const file = await writeProfile('bad-amp.yaml', `extends: demo\n${yaml}`);

    // Act
    const error = await failure(file);

    // Assess
    expect(error).toBeInstanceOf(ProfileInvalidError);
    expect(error.message).toContain(text);
  });

  it('takes the GPU NodePool limit from a file that extends a built-in, which has none', async () => {
    // Prepare
    const file = await writeProfile('gpu-limit.yaml', 'extends: demo\nkarpenter:\n  gpuLimit: 3\n');

    // Act
    const profile = await loadProfile(file);

    // Assess
    expect(profile.karpenter).toEqual({ gpuLimit: 3 });
    for (const name of BUILT_IN_PROFILES) expect((await loadProfile(name)).karpenter).toBeUndefined();
  });

  it.each([
    { case: 'a limit of 0', yaml: 'karpenter:\n  gpuLimit: 0\n', text: 'karpenter.gpuLimit: ' },
    { case: 'a fractional limit', yaml: 'karpenter:\n  gpuLimit: 2.5\n', text: 'karpenter.gpuLimit: ' },
    // demo starts 2 replicas, and `twin up` waits for both.
    {
      case: 'a limit below the replicas',
      yaml: 'karpenter:\n  gpuLimit: 1\n',
      text: 'karpenter.gpuLimit: must be at least replicas (2)',
    },
    { case: 'an unknown karpenter key', yaml: 'karpenter:\n  gpus: 2\n', text: 'karpenter: unknown key "gpus"' },
  ])('rejects $case, naming the field', async ({ yaml, text }) => {
    // Prepare
    const file = await writeProfile('bad-karpenter.yaml', `extends: demo\n${yaml}`);

    // Act
    const error = await failure(file);

    // Assess
    expect(error).toBeInstanceOf(ProfileInvalidError);
    expect(error.message).toContain(text);
  });

  it('requires every field when the file extends nothing', async () => {
    // Prepare
    const file = await writeProfile('partial.yaml', 'name: partial\nreplicas: 1\n');

    // Act
    const error = await failure(file);

    // Assess
    expect(error).toBeInstanceOf(ProfileInvalidError);
    expect(error.message).toContain('model: ');
    expect(error.message).toContain('(missing)');
  });

  it('lists the built-in profiles for an unknown name', async () => {
    // Act
    const error = await failure('ministral');

    // Assess
    expect(error).toBeInstanceOf(ProfileNotFoundError);
    for (const name of BUILT_IN_PROFILES) expect(error.message).toContain(name);
  });

  it.each([
    {
      case: 'a missing file',
      file: 'nope.yaml',
      content: undefined,
      type: ProfileNotFoundError,
      text: 'does not exist',
    },
    {
      case: 'broken YAML',
      file: 'broken.yaml',
      content: 'engine: [unclosed\n',
      type: ProfileParseError,
      text: 'is not valid',
    },
    {
      case: 'a list instead of a mapping',
      file: 'list.yaml',
      content: '- demo\n',
      type: ProfileParseError,
      text: 'mapping',
    },
    {
      case: 'extends of a non-built-in',
      file: 'ext.yaml',
      content: 'extends: prod\n',
      type: ProfileInvalidError,
      text: 'extends: must name a built-in profile',
    },
  ])('reports $case clearly', async ({ file, content, type, text }) => {
    // Prepare
    const target = content === undefined ? path.join(dir, file) : await writeProfile(file, content);

    // Act
    const error = await failure(target);

    // Assess
    expect(error).toBeInstanceOf(type);
    expect(error.message).toContain(text);
    expect(error.message).toContain(target);
  });

  it.each([
    {
      case: 'a duplicate key in JSON (JSON.parse would keep the last)',
      file: 'dup.json',
      content: '{"extends": "demo", "replicas": 2, "replicas": 30}',
      text: 'dup.json:1:36 is not valid YAML or JSON: Map keys must be unique (key "replicas" appears more than once)',
    },
    {
      case: 'a YAML syntax error, without the code frame',
      file: 'syntax.yaml',
      content: 'extends: demo\nengine:\n  maxNumSeqs: [1,\n  bad: 2\n',
      text: 'syntax.yaml:4:3 is not valid YAML or JSON: ',
    },
    {
      case: 'a KV cache that cannot hold one max-length sequence',
      file: 'kv.yaml',
      content: 'extends: demo\nengine:\n  kvCacheBlocks: 16\n',
      text: 'engine.maxModelLen: must be at most the tokens the KV cache holds (kvCacheBlocks 16 x blockSize 16 = 256)',
    },
    {
      case: 'idle power above the maximum',
      file: 'power.yaml',
      content: 'extends: demo\ngpu:\n  idlePowerWatts: 500\n',
      text: 'gpu.maxPowerWatts: must be at least idlePowerWatts (500) (got 350)',
    },
    {
      case: 'a line break in the model name',
      file: 'model.yaml',
      content: 'extends: demo\nmodel: "a\\nb"\n',
      text: 'model: must not contain control characters (line breaks, tabs, escapes) (got "a\\nb")',
    },
    {
      case: 'NaN, shown as NaN (JSON would print null)',
      file: 'nan.yaml',
      content: 'extends: demo\nengine:\n  prefillTokensPerSecond: .nan\n',
      text: '(got NaN)',
    },
    {
      case: 'an unquoted vLLM version (a number to YAML)',
      file: 'version.yaml',
      content: 'extends: demo\nvllmVersion: 0.11\n',
      text: 'vllmVersion: must be one of "0.9", "0.11", "latest", quoted',
    },
    {
      case: 'a negative GPU limit, once (not again as below the replicas)',
      file: 'limit.yaml',
      content: 'extends: demo\nkarpenter:\n  gpuLimit: -1\n',
      text: 'is invalid: karpenter.gpuLimit: Too small: expected number to be >0 (got -1)',
    },
  ])('refuses $case in one line', async ({ file, content, text }) => {
    // Prepare
    const target = await writeProfile(file, content);

    // Act
    const error = await failure(target);

    // Assess
    expect(error.message).toContain(text);
    expect(error.message).not.toContain('\n');
    // One problem, said once (issues are joined by "; ").
    expect(error.message).not.toContain('; ');
  });
});
