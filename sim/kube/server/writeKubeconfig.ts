import { chmod, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { KubeconfigOptionError, KubeconfigWriteError } from './errors.js';

export interface KubeconfigOptions {
  /** The API server URL, e.g. `http://127.0.0.1:PORT`. */
  server: string;
  /** Names the cluster and the context (and is the current context). */
  clusterName: string;
  /** The bearer token the user presents. */
  token: string;
  /** The user entry's name. Default: `<clusterName>-user`. */
  user?: string;
  /** The context's namespace. Default: none (kubectl and client-node then use `default`). */
  namespace?: string;
}

/**
 * The kubeconfig for a cluster, as YAML: one cluster, one token user, one context, current. The twin serves plain
 * HTTP, so the cluster sets `insecure-skip-tls-verify: true`, without which client-node 1.4 refuses an http server.
 */
export function renderKubeconfig(options: KubeconfigOptions): string {
  for (const field of ['server', 'clusterName', 'token'] as const) {
    if (typeof options[field] !== 'string' || options[field] === '') {
      throw new KubeconfigOptionError(field, 'is required: a non-empty string');
    }
  }
  if (!/^https?:\/\/[^/\s]+\/?$/.test(options.server)) {
    throw new KubeconfigOptionError(
      'server',
      `must be an http(s) URL such as http://127.0.0.1:6443, got ${options.server}`,
    );
  }
  const user = options.user ?? `${options.clusterName}-user`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: options.clusterName, cluster: { server: options.server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: user, user: { token: options.token } }],
    contexts: [
      {
        name: options.clusterName,
        context: {
          cluster: options.clusterName,
          user,
          ...(options.namespace ? { namespace: options.namespace } : {}),
        },
      },
    ],
    'current-context': options.clusterName,
    preferences: {},
  });
}

/** Writes the kubeconfig to `path` with mode 0600 (it holds a token; kubectl warns about group-readable files). */
export async function writeKubeconfig(path: string, options: KubeconfigOptions): Promise<string> {
  const text = renderKubeconfig(options);
  try {
    await writeFile(path, text, { mode: 0o600 });
    // writeFile keeps the mode of a file that already exists.
    await chmod(path, 0o600);
  } catch (error) {
    throw new KubeconfigWriteError(path, { cause: error });
  }
  return path;
}
