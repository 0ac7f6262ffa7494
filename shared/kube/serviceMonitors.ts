import { KubeNotFoundError } from './errors.js';
import { KINDS } from './kinds.js';
import type { ClusterClient, KubeObject } from './types.js';

/** The Prometheus operator's ServiceMonitor fields the product reads. */
export interface ServiceMonitorSpec {
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
  namespaceSelector?: { any?: boolean; matchNames?: string[] };
  endpoints?: Array<{ port?: string; targetPort?: number | string; path?: string; interval?: string }>;
}

/** A ServiceMonitor looks in its own namespace unless its namespaceSelector says otherwise. */
export function monitorWatchesNamespace(monitor: KubeObject, namespace: string): boolean {
  const selector = (monitor.spec as ServiceMonitorSpec | undefined)?.namespaceSelector;
  if (selector?.any === true) return true;
  if (selector?.matchNames !== undefined && selector.matchNames.length > 0)
    return selector.matchNames.includes(namespace);
  return monitor.metadata.namespace === namespace;
}

/**
 * Whether the monitor's selector selects a Service with these labels. Equality only: matchExpressions are not
 * evaluated (the product's monitors, and the guide's, use matchLabels), and a selector of neither selects every
 * Service, as the operator reads it.
 */
export function monitorSelects(monitor: KubeObject, labels: Readonly<Record<string, string>>): boolean {
  const selector = (monitor.spec as ServiceMonitorSpec | undefined)?.selector;
  if (selector === undefined) return false;
  const wanted = Object.entries(selector.matchLabels ?? {});
  if (wanted.length === 0 && (selector.matchExpressions ?? []).length === 0) return true;
  return wanted.every(([key, value]) => labels[key] === value);
}

/**
 * The ServiceMonitors that scrape `service`: they watch its namespace and select its labels, by name. Empty when the
 * Prometheus operator's CRD is not installed (the API has no such kind).
 */
export async function serviceMonitorsSelecting(
  cluster: Pick<ClusterClient, 'list'>,
  service: KubeObject,
): Promise<KubeObject[]> {
  const namespace = service.metadata.namespace ?? 'default';
  const labels = service.metadata.labels ?? {};
  let monitors: KubeObject[];
  try {
    monitors = await cluster.list({ ...KINDS.serviceMonitor });
  } catch (error) {
    if (error instanceof KubeNotFoundError) return [];
    throw error;
  }
  return monitors
    .filter((m) => monitorWatchesNamespace(m, namespace) && monitorSelects(m, labels))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}
