import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The checks Prometheus's own tools make: `promtool check rules` for a rules file, `amtool check-config` for an
 * Alertmanager config and its templates. Each resolves to undefined when the tool accepts the input, else to the
 * tool's reason in one line (its FAILED lines, the temporary file's path replaced by `label`).
 */

const TOOL_TIMEOUT_MS = 15_000;

/** `promtool check rules` on `text` (written to a temporary file); `label` names it in the reason. */
export async function checkRules(promtool: string, text: string, label: string): Promise<string | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'vllm-pilot-promtool-'));
  try {
    const file = join(dir, 'rules.yaml');
    await writeFile(file, text);
    const { exitCode, output } = await runTool(promtool, ['check', 'rules', file]);
    return exitCode === 0 ? undefined : reasonOf(output, [file], label);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `amtool check-config` on a config file (its templates included); `label` names it in the reason. */
export async function checkAlertmanagerConfig(
  amtool: string,
  file: string,
  label: string,
): Promise<string | undefined> {
  const { exitCode, output } = await runTool(amtool, ['check-config', file]);
  return exitCode === 0 ? undefined : reasonOf(output, [file], label);
}

function runTool(bin: string, args: readonly string[]): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: TOOL_TIMEOUT_MS, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      // A tool that could not run at all says why in the error, not in its output.
      const output = `${stdout}\n${stderr}${error !== null && stdout === '' && stderr === '' ? `\n${error.message}` : ''}`;
      resolve({ exitCode: code, output });
    });
  });
}

/** Lines that only frame the verdict: the file being checked, success counts, amtool's summary and totals. */
const FRAME = [
  /^Checking \S+\s*$/,
  /^Checking '[^']*'\s+SUCCESS$/,
  /^SUCCESS/,
  /^Found:$/,
  /^- /,
  /^FAILED:$/,
  /^amtool: error: failed to validate \d+ file\(s\)$/,
];

/** The tool's complaint in one line: its meaningful lines, once each, with `paths` replaced by `label`. */
function reasonOf(output: string, paths: readonly string[], label: string): string {
  const lines: string[] = [];
  for (const raw of output.split('\n')) {
    let line = raw.trim();
    if (line === '' || FRAME.some((frame) => frame.test(line))) continue;
    for (const path of paths) line = line.split(path).join(label);
    line = line.replace(/^Checking '[^']*'\s+FAILED:\s*/, '').replace(/^FAILED:\s*/, '');
    if (line !== '' && !lines.includes(line)) lines.push(line);
  }
  return lines.length > 0 ? lines.join('; ') : 'refused without a reason';
}
