import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { assertReportKey, type ReportStore, ReportWriteError } from '../../shared/reports/index.js';

/** Reports as files under a folder (the twin, the CLI): `<directory>/<key>`, folders made as needed. */
export class LocalFolderReportStore implements ReportStore {
  readonly directory: string;

  constructor(options: { directory: string }) {
    this.directory = resolve(options.directory);
  }

  /** Writes the file; the location is its absolute path. The content type is not stored (the file name says it). */
  async put(key: string, body: string, _contentType: string): Promise<{ location: string }> {
    assertReportKey(key);
    const path = join(this.directory, ...key.split('/'));
    // assertReportKey already refuses "..": this is the belt to those braces.
    if (!path.startsWith(`${this.directory}${sep}`))
      throw new ReportWriteError(path, `the key leads outside ${this.directory}`);
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, body, 'utf8');
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      throw new ReportWriteError(path, `${e.code ?? 'error'}: ${e.message}`, { cause: error });
    }
    return { location: path };
  }
}
