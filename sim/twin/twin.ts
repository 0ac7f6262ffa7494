import { type Clock, systemClock } from '../../shared/clock/clock.js';
import { type CloudWatchTwin, startCloudWatchTwin } from '../aws/cloudwatch.js';
import { type NodeAgent, startNodeAgent } from '../dcgm/server.js';
import { ensurePrometheus } from '../prometheus/ensurePrometheus.js';
import type { TargetGroups } from '../prometheus/scrapeConfig.js';
import { type PrometheusInstance, startPrometheus } from '../prometheus/startPrometheus.js';
import { startVllmReplica, type VllmReplica } from '../vllm/server.js';
import { TwinStartError } from './errors.js';
import { replicaIdentity } from './identity.js';
import type { Profile } from './profile.js';
import { type TwinState, writeTwinState } from './stateFile.js';

/** The region the twin pretends to be in (the AWS guide's). */
export const TWIN_REGION = 'us-east-2';
/** The EKS cluster name the twin pretends to be (the AWS guide's). */
export const TWIN_CLUSTER = 'ai-eks-docs';
/**
 * Credentials for the twin's endpoints. The product signs every request (one code path); the twin accepts any
 * signature. These are not secrets and must never be real keys.
 */
export const TWIN_CREDENTIALS = { accessKeyId: 'AKIDTWINLOCAL', secretAccessKey: 'twin-local-not-a-secret' } as const;

export interface StartTwinOptions {
  profile: Profile;
  clock?: Clock;
  /** Progress lines for the user. */
  log?: (line: string) => void;
  /** May Debian's prometheus be installed when missing (root + apt-get)? */
  allowInstallPrometheus?: boolean;
  /** Written once everything is ready. */
  stateFile?: string;
  /** How long to wait for every replica to load and every target to be scraped (default: load time + 60 s). */
  readyTimeoutMs?: number;
  /** Stops the start-up (Ctrl-C while a model loads): what was started is stopped, and startTwin rejects. */
  signal?: AbortSignal;
}

export interface Replica {
  vllm: VllmReplica;
  node: NodeAgent;
}

export interface Twin {
  profile: Profile;
  state: TwinState;
  replicas: Replica[];
  prometheus: PrometheusInstance;
  cloudwatch: CloudWatchTwin;
  stop(): Promise<void>;
}

/**
 * Starts the local twin: one simulated vLLM replica per profile replica, each with its GPU node's exporters
 * (dcgm-exporter and the kubelet's cAdvisor), the real Prometheus scraping them all, and the AWS endpoints.
 * Resolves once every replica has loaded its model and Prometheus has scraped every target; on failure, whatever was
 * started is stopped again.
 */
export async function startTwin(options: StartTwinOptions): Promise<Twin> {
  const { profile } = options;
  const clock = options.clock ?? systemClock;
  const log = options.log ?? (() => undefined);
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  const checkpoint = () => {
    if (options.signal?.aborted) throw new TwinStartError('start-up stopped before the twin was ready');
  };

  try {
    const installation = await ensurePrometheus({ allowInstall: options.allowInstallPrometheus ?? false, log });
    checkpoint();
    const cloudwatch = await startCloudWatchTwin({ region: TWIN_REGION });
    stops.push(() => cloudwatch.stop());

    const replicas: Replica[] = [];
    for (let i = 0; i < profile.replicas; i++) {
      const identity = replicaIdentity(profile, i, TWIN_REGION);
      const vllm = await startVllmReplica({ profile, identity, clock });
      stops.push(() => vllm.stop());
      const node = await startNodeAgent({ identity, gpu: profile.gpu, telemetry: vllm, clock });
      stops.push(() => node.stop());
      replicas.push({ vllm, node });
      checkpoint();
      log(`replica ${identity.pod}: vLLM at ${vllm.url}, exporters at ${node.url}`);
    }

    const prometheus = await startPrometheus({
      bin: installation.bin,
      scrapeIntervalSeconds: profile.prometheus.scrapeIntervalSeconds,
      targetGroups: scrapeTargets(replicas),
      log,
    });
    stops.push(() => prometheus.stop());
    checkpoint();

    const timeoutMs = options.readyTimeoutMs ?? profile.startup.modelLoadSeconds * 1000 + 60_000;
    log(`waiting for ${profile.replicas} replica(s) to load the model (${profile.startup.modelLoadSeconds} s)`);
    await waitUntil(
      () => replicas.every((r) => r.vllm.telemetry().loaded),
      timeoutMs,
      () => new TwinStartError(`replicas did not load within ${timeoutMs} ms`),
      checkpoint,
    );
    await prometheus.waitForTargets({ timeoutMs });
    checkpoint();

    const state: TwinState = {
      version: 1,
      profile: profile.name,
      pid: process.pid,
      startedAt: new Date(clock.now()).toISOString(),
      clusterName: TWIN_CLUSTER,
      region: TWIN_REGION,
      namespace: profile.namespace,
      deployment: profile.deployment,
      model: profile.model,
      vllmVersion: profile.vllmVersion,
      prometheusUrl: prometheus.url,
      replicas: replicas.map(({ vllm, node }) => ({
        name: vllm.identity.pod,
        node: vllm.identity.node,
        gpuUuid: vllm.identity.gpuUuid,
        url: vllm.url,
        metricsUrl: vllm.metricsUrl,
        dcgmMetricsUrl: node.dcgmMetricsUrl,
        cadvisorMetricsUrl: node.cadvisorMetricsUrl,
      })),
      aws: { region: TWIN_REGION, cloudwatchEndpoint: cloudwatch.endpoint },
    };
    if (options.stateFile) await writeTwinState(options.stateFile, state);

    let stopped: Promise<void> | undefined;
    return {
      profile,
      state,
      replicas,
      prometheus,
      cloudwatch,
      stop: () => (stopped ??= stopAll()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * What Prometheus scrapes, labelled as the Prometheus Operator labels targets on EKS: the vLLM ServiceMonitor adds
 * namespace/pod/service/container/endpoint; the exporters set their own Pod labels (honor_labels).
 */
export function scrapeTargets(replicas: readonly Replica[]): TargetGroups {
  return {
    vllm: replicas.map(({ vllm }) => ({
      targets: [new URL(vllm.url).host],
      labels: {
        namespace: vllm.identity.namespace,
        pod: vllm.identity.pod,
        service: `${vllm.identity.deployment}-svc`,
        container: vllm.identity.container,
        endpoint: 'http',
      },
    })),
    'dcgm-exporter': replicas.map(({ node, vllm }) => ({
      targets: [node.address],
      labels: { namespace: 'gpu-operator', service: 'nvidia-dcgm-exporter', node: vllm.identity.node },
    })),
    'kubelet-cadvisor': replicas.map(({ node, vllm }) => ({
      targets: [node.address],
      labels: { service: 'kubelet', endpoint: 'https-metrics', node: vllm.identity.node },
    })),
  };
}

async function waitUntil(
  done: () => boolean,
  timeoutMs: number,
  onTimeout: () => Error,
  checkpoint: () => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    checkpoint();
    if (Date.now() > deadline) throw onTimeout();
    await new Promise((r) => setTimeout(r, 100));
  }
}
