import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfigError } from './errors.js';
import { KubeClusterClient } from './KubeClusterClient.js';
import type { ClusterClient } from './types.js';

/**
 * A ClusterClient from a kubeconfig file (the twin writes one; `aws eks update-kubeconfig` writes one with an
 * `exec` user, which client-node runs). `context` defaults to the file's current-context.
 */
export function connectWithKubeconfig(path: string, context?: string): ClusterClient {
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(path);
  } catch (error) {
    throw new KubeConfigError(path, `cannot be read: ${(error as Error).message}`, error);
  }
  const names = kubeConfig.getContexts().map((c) => c.name);
  if (context !== undefined) {
    if (!names.includes(context))
      throw new KubeConfigError(
        path,
        `has no context ${JSON.stringify(context)}; accepted: ${names.length > 0 ? names.join(', ') : '(the file has no contexts)'}`,
      );
    kubeConfig.setCurrentContext(context);
  }
  if (kubeConfig.getCurrentCluster() === null)
    throw new KubeConfigError(
      path,
      `names no cluster for context ${JSON.stringify(kubeConfig.getCurrentContext() ?? '')}; pass one of: ${names.join(', ') || '(none)'}`,
    );
  return new KubeClusterClient(kubeConfig);
}
