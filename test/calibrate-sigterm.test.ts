import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli } from './helpers/cli.js';

// Issue 15: SIGTERM (a CI runner's cancel, `kill`, a container stop) stops `vllm-pilot calibrate` as Ctrl-C does: the
// same cleanup path, the same message, a non-zero exit. test/cli.test.ts covers Ctrl-C itself.

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('Command: vllm-pilot calibrate, stopped with SIGTERM', () => {
  let dir: string;
  let stateFile: string;
  let twinUp: ChildProcess;
  let twinExit: Promise<number | null>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'calibrate-sigterm-'));
    const profile = join(dir, 'one-replica.yaml');
    await writeFile(
      profile,
      'extends: demo\nreplicas: 1\namp:\n  ingestionLagSeconds: 0\n  ingestionJitterSeconds: 0\n',
    );
    stateFile = join(dir, 'state.json');
    twinUp = startCli(['twin', 'up', '--profile', profile, '--state-file', stateFile, '--no-install']);
    let upStderr = '';
    twinUp.stderr?.on('data', (chunk: Buffer) => (upStderr += chunk.toString('utf8')));
    twinUp.stdout?.resume();
    twinExit = new Promise((resolve) => twinUp.once('exit', (code) => resolve(code)));
    let exited = false;
    void twinExit.then(() => (exited = true));
    for (let attempt = 0; attempt < 900 && !exited && !(await exists(stateFile)); attempt++)
      await new Promise((done) => setTimeout(done, 100));
    if (!(await exists(stateFile))) throw new Error(`twin up wrote no state file; its stderr:\n${upStderr}`);
  }, 120_000);

  afterAll(async () => {
    if (twinUp?.exitCode === null && twinUp.signalCode === null) {
      twinUp.kill('SIGTERM');
      await twinExit;
    }
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('exits 1 and says what the cleanup undid, as after Ctrl-C', async () => {
    // Prepare: a hold long enough to be interrupted in.
    const input = join(dir, 'input.json');
    await writeFile(
      input,
      JSON.stringify({
        deploy: { mode: 'adopt', allowServingTraffic: true },
        warmup: { requests: 5 },
        plan: { rates: [5], holdSeconds: 30, restSeconds: 1 },
      }),
    );
    const calibrate = startCli(['calibrate', '--state-file', stateFile, '--input', input, '--out', join(dir, 'out')]);
    let stderr = '';
    calibrate.stdout?.resume();
    const code = new Promise<number | null>((resolve) => calibrate.once('exit', (c) => resolve(c)));

    // Act: SIGTERM a few seconds into the load step's hold (the "ready:" line is the last before the step).
    await new Promise<void>((resolve) => {
      let sent = false;
      calibrate.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        if (!sent && /\n {2}ready: /.test(stderr)) {
          sent = true;
          setTimeout(() => {
            calibrate.kill('SIGTERM');
            resolve();
          }, 3_000);
        }
      });
      void code.then(() => resolve());
    });

    // Assess
    expect({ exitCode: await code, stderr }).toMatchObject({ exitCode: 1 });
    expect(stderr).toMatch(/ExecutionAborted: .*stopped \(Ctrl-C\); cleaned up: .*replicas back to 1/);
  }, 120_000);
});
