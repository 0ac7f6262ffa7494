import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReportKeyInvalidError, ReportWriteError } from '../../shared/reports/index.js';
import { LocalFolderReportStore } from './localFolderReportStore.js';

describe('Class: LocalFolderReportStore', () => {
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'vllm-pilot-reports-'));
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  describe('Method: put', () => {
    it('writes <directory>/<key>, making the folders, and gives the absolute path as the location', async () => {
      // Prepare
      const store = new LocalFolderReportStore({ directory });

      // Act
      const result = await store.put('calibration/prod/run-1/report.json', '{"version":1}', 'application/json');

      // Assess
      const path = join(directory, 'calibration', 'prod', 'run-1', 'report.json');
      expect(result).toEqual({ location: path });
      expect(await readFile(path, 'utf8')).toBe('{"version":1}');
    });

    it('replaces a report written under the same key', async () => {
      // Prepare
      const store = new LocalFolderReportStore({ directory });
      await store.put('run-1/chart.svg', '<svg>old</svg>', 'image/svg+xml');

      // Act
      await store.put('run-1/chart.svg', '<svg>new</svg>', 'image/svg+xml');

      // Assess
      expect(await readFile(join(directory, 'run-1', 'chart.svg'), 'utf8')).toBe('<svg>new</svg>');
    });

    it.each([
      { case: 'a ".." part', key: 'calibration/../../outside.json', problem: 'has a ".." part' },
      { case: 'a leading "/"', key: '/etc/report.json', problem: 'starts with "/"' },
      { case: 'an empty part', key: 'calibration//report.json', problem: 'has an empty part' },
      { case: 'a backslash', key: 'calibration\\..\\report.json', problem: 'contains a backslash' },
      { case: 'nothing', key: '', problem: 'is empty' },
    ])('refuses a key with $case and writes nothing', async ({ key, problem }) => {
      // Prepare
      const store = new LocalFolderReportStore({ directory: join(directory, 'reports') });

      // Act
      const act = store.put(key, 'x', 'text/plain');

      // Assess
      await expect(act).rejects.toThrow(ReportKeyInvalidError);
      await expect(store.put(key, 'x', 'text/plain')).rejects.toThrow(problem);
      expect(await readdir(directory)).toEqual([]);
    });

    it('names the path and the system error when the folder cannot be written', async () => {
      // Prepare: a file where the store needs a folder.
      await writeFile(join(directory, 'calibration'), 'not a folder');
      const store = new LocalFolderReportStore({ directory });

      // Act
      const act = store.put('calibration/run-1/report.json', '{}', 'application/json');

      // Assess
      await expect(act).rejects.toThrow(ReportWriteError);
      await expect(store.put('calibration/run-1/report.json', '{}', 'application/json')).rejects.toThrow(
        `could not write the report to ${join(directory, 'calibration', 'run-1', 'report.json')}: ENOTDIR`,
      );
    });
  });
});
