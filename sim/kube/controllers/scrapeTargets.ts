import type { TargetGroup, TargetGroups } from '../../prometheus/scrapeConfig.js';
import { matchesSelector } from '../labels.js';
import type { KubeObject, LabelSelector } from '../types.js';
import { controllerOf, field } from './meta.js';
import { type ContainerSpec, containersOf, isPodReady } from './podStatus.js';
import { isVllmContainer } from './vllmArgs.js';

/** What the targets are computed from: the store's objects and where the running servers listen. */
export interface ScrapeWorld {
  pods: readonly KubeObject[];
  services: readonly KubeObject[];
  serviceMonitors: readonly KubeObject[];
  nodes: readonly KubeObject[];
  /** `127.0.0.1:PORT` of a Pod's server (vLLM Pods), if it runs one. */
  podAddress(namespace: string, pod: string): string | undefined;
  /** `127.0.0.1:PORT` of a GPU node's agent (dcgm-exporter and cAdvisor), if it runs one. */
  nodeAgentAddress(node: string): string | undefined;
}

interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
}
interface MonitorEndpoint {
  port?: string;
  targetPort?: number | string;
}

/**
 * What the Prometheus Operator would make Prometheus scrape (the twin's three jobs):
 * - `vllm`: the Ready Pods behind every Service that a ServiceMonitor selects (its `selector` matches the Service's
 *   labels; its `namespaceSelector` — `any`, `matchNames`, or by default its own namespace — allows the Service's
 *   namespace) through an endpoint whose `port` names a Service port (or whose `targetPort` is one); labelled
 *   namespace, pod, service, container, endpoint as the operator's relabelling does.
 * - `dcgm-exporter`: the agents of GPU nodes on which a Ready Pod of a DaemonSet with a `dcgm-exporter` image runs.
 * - `kubelet-cadvisor`: every GPU node's agent (the kubelet's cAdvisor endpoint exists with or without add-ons).
 */
export function computeScrapeTargets(world: ScrapeWorld): Required<TargetGroups> {
  return {
    vllm: dedupe(vllmTargets(world)),
    'dcgm-exporter': dedupe(dcgmTargets(world)),
    'kubelet-cadvisor': dedupe(cadvisorTargets(world)),
  };
}

function vllmTargets(world: ScrapeWorld): TargetGroup[] {
  const groups: TargetGroup[] = [];
  for (const monitor of world.serviceMonitors) {
    const monitorNamespace = monitor.metadata.namespace as string;
    const selector = field<LabelSelector>(monitor, 'spec', 'selector') ?? {};
    const namespaceSelector = field<{ any?: boolean; matchNames?: string[] }>(monitor, 'spec', 'namespaceSelector');
    const allowed = (ns: string) =>
      namespaceSelector?.any === true
        ? true
        : namespaceSelector?.matchNames && namespaceSelector.matchNames.length > 0
          ? namespaceSelector.matchNames.includes(ns)
          : ns === monitorNamespace;
    const endpoints = field<MonitorEndpoint[]>(monitor, 'spec', 'endpoints') ?? [];
    for (const service of world.services) {
      const namespace = service.metadata.namespace as string;
      if (!allowed(namespace) || !matchesSelector(service.metadata.labels, selector)) continue;
      const podSelector = field<Record<string, string>>(service, 'spec', 'selector');
      if (!podSelector || Object.keys(podSelector).length === 0) continue;
      const ports = field<ServicePort[]>(service, 'spec', 'ports') ?? [];
      for (const endpoint of endpoints) {
        const port = ports.find((p) =>
          endpoint.port !== undefined
            ? p.name === endpoint.port
            : endpoint.targetPort !== undefined && String(p.targetPort ?? p.port) === String(endpoint.targetPort),
        );
        if (!port) continue;
        for (const pod of world.pods) {
          if (pod.metadata.namespace !== namespace || !isPodReady(pod)) continue;
          if (!matchesSelector(pod.metadata.labels, { matchLabels: podSelector })) continue;
          const address = world.podAddress(namespace, pod.metadata.name);
          if (!address) continue;
          groups.push({
            targets: [address],
            labels: {
              namespace,
              pod: pod.metadata.name,
              service: service.metadata.name,
              container: containerFor(containersOf(pod), port.targetPort ?? port.port),
              endpoint: port.name ?? String(port.port),
            },
          });
        }
      }
    }
  }
  return groups;
}

/** The container exposing `targetPort` (by number or name), else the vLLM container, else the first. */
function containerFor(containers: ContainerSpec[], targetPort: number | string): string {
  const byPort = containers.find((c) =>
    (c.ports ?? []).some((p) =>
      typeof targetPort === 'number' ? p.containerPort === targetPort : p.name === targetPort,
    ),
  );
  return (byPort ?? containers.find(isVllmContainer) ?? containers[0])?.name ?? '';
}

function dcgmTargets(world: ScrapeWorld): TargetGroup[] {
  const groups: TargetGroup[] = [];
  for (const node of world.nodes) {
    const address = world.nodeAgentAddress(node.metadata.name);
    if (!address) continue;
    const exporter = world.pods.find(
      (pod) =>
        field(pod, 'spec', 'nodeName') === node.metadata.name &&
        controllerOf(pod)?.kind === 'DaemonSet' &&
        isPodReady(pod) &&
        containersOf(pod).some((c) => (c.image ?? '').includes('dcgm-exporter')),
    );
    if (!exporter) continue;
    const service = world.services.find(
      (s) =>
        s.metadata.namespace === exporter.metadata.namespace &&
        Object.keys(field<Record<string, string>>(s, 'spec', 'selector') ?? {}).length > 0 &&
        matchesSelector(exporter.metadata.labels, {
          matchLabels: field<Record<string, string>>(s, 'spec', 'selector'),
        }),
    );
    groups.push({
      targets: [address],
      labels: {
        namespace: exporter.metadata.namespace as string,
        service: service?.metadata.name ?? (controllerOf(exporter)?.name as string),
        node: node.metadata.name,
      },
    });
  }
  return groups;
}

function cadvisorTargets(world: ScrapeWorld): TargetGroup[] {
  const groups: TargetGroup[] = [];
  for (const node of world.nodes) {
    const address = world.nodeAgentAddress(node.metadata.name);
    if (address)
      groups.push({
        targets: [address],
        labels: { service: 'kubelet', endpoint: 'https-metrics', node: node.metadata.name },
      });
  }
  return groups;
}

/** One group per distinct address + labels, sorted, so equal worlds give equal (comparable) target lists. */
function dedupe(groups: TargetGroup[]): TargetGroup[] {
  const seen = new Map<string, TargetGroup>();
  for (const group of groups) seen.set(JSON.stringify([group.targets, group.labels ?? {}]), group);
  return [...seen.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, g]) => g);
}
