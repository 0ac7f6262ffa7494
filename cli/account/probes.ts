import type { Target } from '../../shared/config/index.js';
import {
  KINDS,
  KubeForbiddenError,
  KubeNotFoundError,
  KubeUnauthorizedError,
  type ClusterClient,
} from '../../shared/kube/index.js';
import { eq, selector, VLLM, type MetricsSource } from '../../shared/metrics/index.js';
import { describeNoAnswer, findNoAnswer } from '../../shared/network/index.js';
import {
  ClusterAccessDeniedError,
  ClusterReadForbiddenError,
  ClusterUnreachableError,
  ModelSeriesNotFoundError,
} from './errors.js';

/**
 * One cheap read before a command's real work, so that a mistake in the account (no access entry, a private
 * endpoint, a model name that matches nothing) is one line naming the cause and the fix, not eleven failed checks or
 * an empty table.
 */

/**
 * Reads the target's Deployment: any answer (a 404 included: preflight reports it) proves the cluster reachable and
 * the identity let in. A 401, a 403 and no answer at all become the named errors of ./errors.ts.
 */
export async function probeCluster(cluster: ClusterClient, target: Target, region: string): Promise<void> {
  try {
    await cluster.get({ ...KINDS.deployment, namespace: target.namespace, name: target.deployment });
  } catch (error) {
    if (error instanceof KubeNotFoundError) return;
    if (error instanceof KubeUnauthorizedError)
      throw new ClusterAccessDeniedError(target.cluster, region, { cause: error });
    if (error instanceof KubeForbiddenError)
      throw new ClusterReadForbiddenError(target.cluster, error.serverMessage ?? error.message, { cause: error });
    const unanswered = findNoAnswer(error);
    if (unanswered !== undefined)
      throw new ClusterUnreachableError(
        target.cluster,
        region,
        `${unanswered.host ?? 'its API endpoint'} ${describeNoAnswer(unanswered.kind, unanswered.waitedMs)}`,
        { cause: error },
      );
    throw error;
  }
}

/**
 * Asks AMP which models have vLLM series in the target's namespace (and cluster, when labelled); refuses the target
 * when its model is not among them, listing the ones that are.
 */
export async function probeModel(source: MetricsSource, target: Target, signal?: AbortSignal): Promise<void> {
  const matchers = [
    eq('namespace', target.namespace),
    ...(target.clusterLabel === undefined ? [] : [eq(target.clusterLabel, target.cluster)]),
  ];
  const query = `group by (model_name) (${selector(VLLM.numRequestsRunning, matchers)})`;
  const samples = await source.instant(query, signal === undefined ? {} : { signal });
  const models = [
    ...new Set(samples.map((s) => s.labels.model_name).filter((m): m is string => m !== undefined)),
  ].sort();
  if (!models.includes(target.model)) throw new ModelSeriesNotFoundError(target.model, target.namespace, models);
}
