import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../shared/clock/index.js';
import type { ReplicaIdentity, TelemetrySource } from '../vllm/telemetry.js';
import { CadvisorPod, renderCadvisorMetrics } from './cadvisor.js';
import { DcgmGpu, type GpuSpec, type PodRef } from './DcgmGpu.js';
import { NodeAgentStartError } from './errors.js';
import { renderDcgmMetrics } from './renderDcgmMetrics.js';

export interface NodeAgentOptions {
  /** The replica whose Pod runs on this node and uses its one GPU. */
  identity: ReplicaIdentity;
  gpu: GpuSpec;
  telemetry: TelemetrySource;
  clock: Clock;
  /** The `DCGM_FI_DRIVER_VERSION` label. */
  driverVersion?: string;
  /** Also export the volatile ECC counters (not in the default counters file). */
  eccCounters?: boolean;
  /** The vLLM container's image, for cAdvisor's `image` label. */
  image?: string;
  /**
   * How often the GPU is sampled between scrapes (DCGM's own sampling, ms; default 1000). 0 samples only on scrapes,
   * which unit tests on a virtual clock use.
   */
  sampleIntervalMs?: number;
}

/** A node's exporters: dcgm-exporter on `/metrics` and the kubelet's cAdvisor on `/metrics/cadvisor`. */
export interface NodeAgent {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `127.0.0.1:PORT`, the scrape target address. */
  address: string;
  dcgmMetricsUrl: string;
  cadvisorMetricsUrl: string;
  /** The GPU, for fault injection (`gpu.setFault(...)`). */
  gpu: DcgmGpu;
  /** The Pod is gone: the GPU is exported without Pod labels and the Pod's cAdvisor series disappear. */
  detachPod(): void;
  /** A (new) Pod of a replica starts on this node and uses the GPU. */
  attachPod(pod: PodRef, telemetry: TelemetrySource): void;
  /** Stops the server and its sampler and closes open connections. */
  stop(): Promise<void>;
}

const TEXT_FORMAT = 'text/plain; version=0.0.4; charset=utf-8';

/** Starts a node agent on a free loopback port. */
export async function startNodeAgent(options: NodeAgentOptions): Promise<NodeAgent> {
  const { identity, clock } = options;
  const gpu = new DcgmGpu({
    device: identity,
    spec: options.gpu,
    clock,
    ...(options.driverVersion !== undefined ? { driverVersion: options.driverVersion } : {}),
    ...(options.eccCounters !== undefined ? { eccCounters: options.eccCounters } : {}),
  });
  const newCadvisorPod = (pod: PodRef, telemetry: TelemetrySource): CadvisorPod =>
    new CadvisorPod({
      identity: pod,
      telemetry,
      clock,
      ...(options.image !== undefined ? { image: options.image } : {}),
    });
  let cadvisorPod: CadvisorPod | undefined = newCadvisorPod(identity, options.telemetry);
  gpu.attachPod(identity, options.telemetry);

  const server = createServer((request, response) => {
    handleNodeAgentRequest(request, response, gpu, () => cadvisorPod);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    throw new NodeAgentStartError(identity.node, { cause: error });
  }
  const { port } = server.address() as AddressInfo;
  const address = `127.0.0.1:${port}`;

  const intervalMs = options.sampleIntervalMs ?? 1_000;
  // DCGM samples the GPU on its own schedule, so the utilisation window does not depend on the scrape interval.
  const sampler =
    intervalMs > 0
      ? setInterval(() => {
          try {
            gpu.sample();
          } catch {
            // A telemetry failure shows up as a 500 on the next scrape; the sampler just tries again.
          }
        }, intervalMs)
      : undefined;
  sampler?.unref();

  let stopping: Promise<void> | undefined;
  return {
    url: `http://${address}`,
    address,
    dcgmMetricsUrl: `http://${address}/metrics`,
    cadvisorMetricsUrl: `http://${address}/metrics/cadvisor`,
    gpu,
    detachPod() {
      gpu.detachPod();
      cadvisorPod = undefined;
    },
    attachPod(pod, telemetry) {
      gpu.attachPod(pod, telemetry);
      cadvisorPod = newCadvisorPod(pod, telemetry);
    },
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        if (sampler) clearInterval(sampler);
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}

function handleNodeAgentRequest(
  request: IncomingMessage,
  response: ServerResponse,
  gpu: DcgmGpu,
  cadvisorPod: () => CadvisorPod | undefined,
): void {
  const path = new URL(request.url ?? '/', 'http://node-agent').pathname;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    send(response, 405, 'text/plain; charset=utf-8', 'method not allowed: use GET\n');
    return;
  }
  try {
    if (path === '/metrics') {
      send(response, 200, TEXT_FORMAT, renderDcgmMetrics([gpu.sample()]));
    } else if (path === '/metrics/cadvisor') {
      const pod = cadvisorPod();
      send(response, 200, TEXT_FORMAT, renderCadvisorMetrics(pod ? [pod.sample()] : []));
    } else {
      send(response, 404, 'text/plain; charset=utf-8', `not found: ${path} (try /metrics or /metrics/cadvisor)\n`);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    send(response, 500, 'text/plain; charset=utf-8', `collecting metrics failed: ${message}\n`);
  }
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}
