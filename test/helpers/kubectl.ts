import { execFile, spawnSync } from 'node:child_process';

/** The kubectl binary the end-to-end tests run (`KUBECTL` overrides the one on PATH). */
export const KUBECTL = process.env.KUBECTL ?? 'kubectl';

/** What one kubectl run printed, and its exit code. */
export interface KubectlRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  kubeconfig: string;
  /** kubectl's discovery cache: a scratch folder, so the user's ~/.kube/cache is left alone. */
  cacheDir: string;
  /** Written to kubectl's stdin (`apply -f -`). */
  stdin?: string;
}

/** Throws with an install hint when kubectl cannot run, so a missing binary is not mistaken for a twin bug. */
export function requireKubectl(): void {
  const probe = spawnSync(KUBECTL, ['version', '--client'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `kubectl is needed for these tests and could not run as "${KUBECTL}" ` +
        `(${probe.error?.message ?? probe.stderr.trim()}): install kubectl 1.30 or later ` +
        '(e.g. `apt-get install kubectl`, or https://kubernetes.io/docs/tasks/tools/) or set KUBECTL to its path',
    );
  }
}

/**
 * Runs kubectl asynchronously (the twin's API server lives in this process: a synchronous child would block the
 * event loop that must answer it). `KUBECONFIG` is cleared so only the given kubeconfig counts.
 */
export function kubectl(args: readonly string[], options: KubectlOptions): Promise<KubectlRun> {
  return new Promise((resolve) => {
    const child = execFile(
      KUBECTL,
      [...args, '--kubeconfig', options.kubeconfig, '--cache-dir', options.cacheDir],
      { encoding: 'utf8', env: { ...process.env, KUBECONFIG: '' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(options.stdin ?? '');
  });
}

/** One table kubectl printed: its column headers and each row as header → cell. */
export interface KubectlTable {
  headers: string[];
  rows: Array<Record<string, string>>;
}

/**
 * Reads kubectl's tables (one per kind with `get a,b,c`, separated by blank lines). kubectl left-aligns every
 * column at its header's offset, so cells are cut at the header offsets; cells may hold single spaces
 * (`0/25 (avg), 0/5`: the queue per Pod, the p95 as a whole).
 */
export function parseKubectlTables(stdout: string): KubectlTable[] {
  return stdout
    .split(/\n\s*\n/)
    .map((block) => block.split('\n').filter((line) => line.trim() !== ''))
    .filter((lines) => lines.length > 0)
    .map(([header = '', ...lines]) => {
      const columns = [...header.matchAll(/\S+/g)].map((match) => ({ name: match[0], at: match.index }));
      return {
        headers: columns.map((column) => column.name),
        rows: lines.map((line) =>
          Object.fromEntries(
            columns.map((column, index) => [
              column.name,
              line.slice(column.at, columns[index + 1]?.at ?? line.length).trim(),
            ]),
          ),
        ),
      };
    });
}

/** The row whose NAME is `name` in any of the tables (`deployment.apps/x`, `pod/y`, or a bare name). */
export function kubectlRow(tables: readonly KubectlTable[], name: string): Record<string, string> | undefined {
  for (const table of tables) {
    const row = table.rows.find((r) => r['NAME'] === name);
    if (row) return row;
  }
  return undefined;
}
