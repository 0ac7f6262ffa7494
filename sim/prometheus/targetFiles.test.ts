import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateTargetGroups } from './scrapeConfig.js';
import { targetFilePaths, writeTargetFiles } from './targetFiles.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'target-files-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Function: writeTargetFiles', () => {
  it('writes one file_sd JSON per job and replaces it on the next write, leaving no temporary files', async () => {
    // Prepare
    const files = targetFilePaths(dir);
    const first = validateTargetGroups({
      'dcgm-exporter': [{ targets: ['127.0.0.1:9400'], labels: { namespace: 'gpu-operator' } }],
    });
    const second = validateTargetGroups({ vllm: [{ targets: ['127.0.0.1:8000', '127.0.0.1:8001'] }] });

    // Act
    await writeTargetFiles(files, first);
    const dcgmBefore = JSON.parse(await readFile(files['dcgm-exporter'], 'utf8')) as unknown;
    await writeTargetFiles(files, second);

    // Assess
    expect(dcgmBefore).toEqual([{ targets: ['127.0.0.1:9400'], labels: { namespace: 'gpu-operator' } }]);
    expect(JSON.parse(await readFile(files['dcgm-exporter'], 'utf8'))).toEqual([]);
    expect(JSON.parse(await readFile(files.vllm, 'utf8'))).toEqual([
      { targets: ['127.0.0.1:8000', '127.0.0.1:8001'], labels: {} },
    ]);
    expect((await readdir(dir)).sort()).toEqual(['dcgm-exporter.json', 'kubelet-cadvisor.json', 'vllm.json']);
  });
});
