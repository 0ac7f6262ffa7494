import { startDaemonSetController } from './DaemonSetController.js';
import { startDeploymentController } from './DeploymentController.js';
import { WorkloadOptionsInvalidError } from './errors.js';
import { EventRecorder } from './events.js';
import { startJobController } from './JobController.js';
import { PodRuntime } from './PodRuntime.js';
import { startReplicaSetController } from './ReplicaSetController.js';
import { ScrapeTargetController } from './ScrapeTargetController.js';
import { ServiceController } from './ServiceController.js';
import type { Controller, ControllerContext, WorkloadControllerOptions, Workloads } from './types.js';

/** The guide's region (sim/twin/twin.ts TWIN_REGION). */
const DEFAULT_REGION = 'us-east-2';
const DEFAULTS = { resyncIntervalMs: 1_000, targetsDebounceMs: 200, readinessProbeIntervalMs: 250 } as const;

/**
 * Starts the twin's workload controllers on `store`, as kube-controller-manager, the kubelet, Karpenter, kube-proxy
 * and the Prometheus Operator act on a real cluster: Deployments → ReplicaSets → Pods → vLLM replicas on GPU nodes,
 * Services → loopback proxies, DaemonSets → one Pod per matching node, Jobs → Pods (k6 runs), and ServiceMonitors /
 * the dcgm-exporter DaemonSet → Prometheus targets.
 */
export function startWorkloadControllers(options: WorkloadControllerOptions): Workloads {
  const ctx = contextOf(options);
  const events = new EventRecorder(ctx.store, ctx.clock, ctx.log);
  // The two depend on each other (k6 Pods resolve Services; Services balance over Pods): each reaches the other only
  // from reconciles, which run after both exist.
  const services: ServiceController = new ServiceController({
    ctx,
    endpointOf: (namespace, pod) => pods.endpoint(namespace, pod),
    externalServices: options.externalServices ?? [],
  });
  const resolve = (url: string) => services.resolve(url);
  const pods: PodRuntime = new PodRuntime({
    ctx,
    events,
    resolve,
    readinessProbeIntervalMs: positive(
      options.readinessProbeIntervalMs,
      'readinessProbeIntervalMs',
      DEFAULTS.readinessProbeIntervalMs,
    ),
  });
  const controllers: Controller[] = [
    startDeploymentController(ctx, events),
    startReplicaSetController(ctx, events),
    startDaemonSetController(ctx, events),
    startJobController(ctx, events),
  ];
  if (options.prometheus) {
    controllers.push(
      new ScrapeTargetController({
        ctx,
        sink: options.prometheus,
        debounceMs: positive(options.targetsDebounceMs, 'targetsDebounceMs', DEFAULTS.targetsDebounceMs),
        podAddress: (namespace, pod) => hostOf(pods.endpoint(namespace, pod)),
        nodeAgentAddress: (node) => pods.nodeAgentAddress(node),
      }),
    );
  }
  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        // Controllers first (nothing new starts), then what runs: Pods' processes, then the proxies.
        for (const controller of controllers) await controller.stop();
        await pods.stop();
        await services.stop();
      })()),
    serviceUrl: (namespace, name) => services.serviceUrl(namespace, name),
    podEndpoint: (namespace, pod) => pods.endpoint(namespace, pod),
    resolve,
    replicas: () => pods.replicas(),
    crashVllmContainer: (namespace, pod) => pods.crashVllmContainer(namespace, pod),
  };
}

function contextOf(options: WorkloadControllerOptions): ControllerContext {
  for (const name of ['store', 'logs', 'profile', 'clock'] as const) {
    if (options[name] === undefined || options[name] === null)
      throw new WorkloadOptionsInvalidError(name, options[name], `the twin's ${name}`);
  }
  return {
    store: options.store,
    logs: options.logs,
    profile: options.profile,
    clock: options.clock,
    region: options.region ?? DEFAULT_REGION,
    resyncIntervalMs: positive(options.resyncIntervalMs, 'resyncIntervalMs', DEFAULTS.resyncIntervalMs),
    log: options.log ?? (() => undefined),
  };
}

function positive(value: number | undefined, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0))
    throw new WorkloadOptionsInvalidError(field, value, 'a positive number of milliseconds');
  return value;
}

function hostOf(url: string | undefined): string | undefined {
  return url === undefined ? undefined : new URL(url).host;
}
