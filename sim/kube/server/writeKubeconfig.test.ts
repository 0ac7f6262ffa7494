import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { KubeconfigOptionError, KubeconfigWriteError } from './errors.js';
import { writeKubeconfig } from './writeKubeconfig.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Function: writeKubeconfig', () => {
  it('writes one cluster, token user and current context, skipping TLS verification, with mode 0600', async () => {
    // Prepare
    const path = join(dir, 'admin.kubeconfig');
    await writeFile(path, 'old', { mode: 0o644 });

    // Act
    await writeKubeconfig(path, { server: 'https://127.0.0.1:6443', clusterName: 'vllm-demo', token: 't0k3n' });

    // Assess
    const config = parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'vllm-demo',
      clusters: [
        { name: 'vllm-demo', cluster: { server: 'https://127.0.0.1:6443', 'insecure-skip-tls-verify': true } },
      ],
      users: [{ name: 'vllm-demo-user', user: { token: 't0k3n' } }],
      contexts: [{ name: 'vllm-demo', context: { cluster: 'vllm-demo', user: 'vllm-demo-user' } }],
    });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('names the user and the namespace when asked', async () => {
    // Prepare
    const path = join(dir, 'ro.kubeconfig');

    // Act
    await writeKubeconfig(path, {
      server: 'http://127.0.0.1:1',
      clusterName: 'c',
      token: 't',
      user: 'viewer',
      namespace: 'load',
    });

    // Assess
    const config = parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    expect(config.contexts).toEqual([{ name: 'c', context: { cluster: 'c', user: 'viewer', namespace: 'load' } }]);
  });

  it.each([
    { case: 'an empty token', options: { server: 'http://127.0.0.1:1', clusterName: 'c', token: '' }, field: 'token' },
    {
      case: 'a server that is not a URL',
      options: { server: '127.0.0.1:1', clusterName: 'c', token: 't' },
      field: 'server',
    },
  ])('refuses $case, naming the field', async ({ options, field }) => {
    // Act
    const act = writeKubeconfig(join(dir, 'bad.kubeconfig'), options);

    // Assess
    await expect(act).rejects.toThrow(KubeconfigOptionError);
    await expect(act).rejects.toThrow(`writeKubeconfig: ${field}`);
  });

  it('fails with KubeconfigWriteError naming the path when the directory does not exist', async () => {
    // Act
    const act = writeKubeconfig(join(dir, 'missing', 'x'), {
      server: 'http://127.0.0.1:1',
      clusterName: 'c',
      token: 't',
    });

    // Assess
    await expect(act).rejects.toThrow(KubeconfigWriteError);
    await expect(act).rejects.toThrow('missing/x');
  });
});
