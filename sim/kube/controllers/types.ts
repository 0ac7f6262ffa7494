import type { Clock } from '../../../shared/clock/index.js';
import type { NodeAgent } from '../../dcgm/server.js';
import type { TargetGroups } from '../../prometheus/scrapeConfig.js';
import type { Profile } from '../../profile/profile.js';
import type { VllmReplica } from '../../vllm/server.js';
import type { ObjectStore, PodLogStore } from '../types.js';

/** Where Prometheus's targets go (a PrometheusInstance, or a recorder in tests). */
export interface ScrapeTargetSink {
  setTargets(groups: TargetGroups): Promise<void>;
}

/** A Service that lives outside the store (e.g. the monitoring stack's Prometheus), reachable at `url`. */
export interface ExternalService {
  namespace: string;
  name: string;
  /** Base URL, e.g. the twin's Prometheus `http://127.0.0.1:9090`. */
  url: string;
}

export interface WorkloadControllerOptions {
  store: ObjectStore;
  logs: PodLogStore;
  profile: Profile;
  clock: Clock;
  prometheus?: ScrapeTargetSink;
  /** Decisions, one line each (`deployment default/x: scaling ReplicaSet y 1 -> 2 (spec.replicas 2)`). */
  log?: (line: string) => void;
  /** The AWS region in node names and topology labels (default us-east-2, the guide's). */
  region?: string;
  /** How often every controller re-examines every object, besides reacting to changes (default 1000 ms). */
  resyncIntervalMs?: number;
  /** How long target changes settle before Prometheus gets them (default 200 ms). */
  targetsDebounceMs?: number;
  /** How often a loading vLLM Pod's `/health` is probed (default 250 ms). */
  readinessProbeIntervalMs?: number;
  /** In-cluster names that `resolve` maps although no Service object exists for them. */
  externalServices?: readonly ExternalService[];
}

/** One vLLM Pod's running replica and its GPU node's exporters. */
export interface RunningReplica {
  namespace: string;
  pod: string;
  node: string;
  /** The replica's base URL (`http://127.0.0.1:PORT`). */
  url: string;
  /** The Pod's Ready condition: model loaded and `/health` answered 200. */
  ready: boolean;
  vllm: VllmReplica;
  nodeAgent: NodeAgent;
}

/** The running workload controllers and what they expose to the rest of the twin. */
export interface Workloads {
  /** Stops every controller, proxy, replica, node agent and k6 run (store objects stay). */
  stop(): Promise<void>;
  /** The loopback URL of a Service's proxy (`http://127.0.0.1:PORT`), if the Service exists. */
  serviceUrl(namespace: string, name: string): string | undefined;
  /** The loopback URL of a Pod's server (vLLM Pods only). */
  podEndpoint(namespace: string, pod: string): string | undefined;
  /**
   * Maps an in-cluster URL (`http://<svc>.<ns>.svc[.cluster.local][:port]/path`) to the Service's loopback URL with
   * the same path; any other URL is returned unchanged (an unknown Service name then fails like a DNS miss).
   */
  resolve(url: string): string;
  /** The vLLM replicas of every running vLLM Pod. */
  replicas(): RunningReplica[];
  /**
   * Crashes a vLLM Pod's container (exit code 1); the kubelet restarts it at once, cold: restartCount + 1, not Ready
   * until the model is loaded and warmed up again. Throws WorkloadPodNotRunningError when it runs no vLLM replica.
   */
  crashVllmContainer(namespace: string, pod: string): void;
}

/** What every controller gets. */
export interface ControllerContext {
  store: ObjectStore;
  logs: PodLogStore;
  profile: Profile;
  clock: Clock;
  region: string;
  resyncIntervalMs: number;
  log: (line: string) => void;
}

/** A started controller. */
export interface Controller {
  stop(): Promise<void>;
}
