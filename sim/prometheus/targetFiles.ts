import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SCRAPE_JOB_NAMES, type ScrapeJobName, type TargetGroup } from './scrapeConfig.js';

/** The file_sd file of each job inside `dir`. */
export function targetFilePaths(dir: string): Record<ScrapeJobName, string> {
  return Object.fromEntries(SCRAPE_JOB_NAMES.map((job) => [job, join(dir, `${job}.json`)])) as Record<
    ScrapeJobName,
    string
  >;
}

/**
 * Writes each job's file_sd JSON atomically (a temporary file renamed over the old one), so Prometheus, which
 * watches the files, never reads a half-written list.
 */
export async function writeTargetFiles(
  files: Record<ScrapeJobName, string>,
  groups: Record<ScrapeJobName, TargetGroup[]>,
): Promise<void> {
  await Promise.all(
    SCRAPE_JOB_NAMES.map(async (job) => {
      const file = files[job];
      const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
      const body = groups[job].map((group) => ({ targets: group.targets, labels: group.labels ?? {} }));
      try {
        await writeFile(temporary, `${JSON.stringify(body, null, 2)}\n`);
        await rename(temporary, file);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    }),
  );
}
