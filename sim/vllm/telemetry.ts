/** Identity of one simulated vLLM replica: a Pod with one GPU on its own node (one L40S per g6e.4xlarge). */
export interface ReplicaIdentity {
  /** Pod name, e.g. `vllm-inference-app-7d9c8b6f5d-x2k4q`. */
  pod: string;
  namespace: string;
  deployment: string;
  /** Container name of the vLLM server in the Pod. */
  container: string;
  /** Node (host) name, e.g. `ip-10-0-1-17.us-east-2.compute.internal`. */
  node: string;
  /** GPU index on the node, its UUID and PCI bus id as DCGM reports them. */
  gpuIndex: number;
  gpuUuid: string;
  pciBusId: string;
}

/**
 * What the GPU and container exporters need to know about a replica's engine, read at scrape time.
 * Cumulative values only grow, so an exporter can derive rates between two reads.
 */
export interface ReplicaTelemetry {
  /** Model weights are loaded and vLLM has pre-allocated its memory. */
  loaded: boolean;
  /** Cumulative seconds (simulated) the engine spent executing steps: the GPU's busy time. */
  busySecondsTotal: number;
  /** Cumulative prompt and generated tokens processed. */
  promptTokensTotal: number;
  generationTokensTotal: number;
  /** Requests running in the batch and waiting in the queue right now. */
  running: number;
  waiting: number;
  /** KV-cache usage, 0-1. */
  kvCacheUsage: number;
  /** Cumulative requests received over HTTP (drives container CPU). */
  requestsReceivedTotal: number;
}

/** A source of telemetry for one replica; the DCGM and cAdvisor exporters poll it. */
export interface TelemetrySource {
  telemetry(): ReplicaTelemetry;
}
