import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../shared/clock/index.js';
import type { Profile } from '../profile/profile.js';
import type { ReplicaIdentity, ReplicaTelemetry } from './telemetry.js';
import { engineConfigFromProfile, type EngineOverrides, type RequestEvent, VllmEngine } from './engine.js';
import { VllmConfigInvalidError, VllmNotLoadedError, VllmRequestInvalidError } from './errors.js';
import { pythonFloatRepr } from './exposition.js';
import { type HttpRequestCount, METRICS_CONTENT_TYPE, renderVllmMetrics } from './metrics.js';
import {
  completionChunk,
  type CompletionIdentity,
  completionResponse,
  errorBody,
  parseCompletionRequest,
  usage,
  usageChunk,
} from './openai.js';
import { RealtimeEngineDriver } from './realtimeDriver.js';
import { generatedTokenText } from './tokens.js';

/** The vLLM container args a Deployment may set (they override the profile), plus a KV-cache size override. */
export interface VllmReplicaOverrides extends EngineOverrides {
  /** `--gpu-memory-utilization`: shown in `vllm:cache_config_info`; the KV-cache size stays `kvCacheBlocks`. */
  gpuMemoryUtilization?: number;
  /** `--served-model-name`: the `model_name` label and the only accepted `model` field. */
  servedModelName?: string;
}

export interface StartVllmReplicaOptions {
  profile: Profile;
  identity: ReplicaIdentity;
  clock: Clock;
  overrides?: VllmReplicaOverrides;
}

/** A running replica: one OpenAI-compatible vLLM server on 127.0.0.1 backed by one engine. */
export interface VllmReplica {
  /** Base URL, e.g. `http://127.0.0.1:41234` (the OpenAI API is under `/v1`). */
  url: string;
  metricsUrl: string;
  identity: ReplicaIdentity;
  servedModelName: string;
  engine: VllmEngine;
  /** What the DCGM and cAdvisor exporters read. */
  telemetry(): ReplicaTelemetry;
  /**
   * While set, `GET /metrics` answers 503 and every other endpoint serves as before: Prometheus records failed
   * scrapes (`up` 0) and a gap in the replica's series, as when the metrics endpoint stalls under a scrape timeout.
   */
  setMetricsUnavailable(unavailable: boolean): void;
  /** Stops the engine driver, closes every connection (in-flight requests are aborted) and the listener; idempotent. */
  stop(): Promise<void>;
}

/** Handlers prometheus_fastapi_instrumentator leaves out of http_requests_total in vLLM. */
const UNINSTRUMENTED = new Set(['/metrics', '/health', '/load', '/ping', '/version', '/server_info']);
const ROUTES: Readonly<Record<string, string>> = {
  '/v1/completions': 'POST',
  '/v1/models': 'GET',
  '/health': 'GET',
  '/metrics': 'GET',
};
const MAX_BODY_BYTES = 4 * 1024 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, type: string, message: string, param: string | null = null) {
  sendJson(res, status, errorBody(message, type, status, param));
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function checkOverrides(overrides: VllmReplicaOverrides): void {
  const utilization = overrides.gpuMemoryUtilization;
  if (utilization !== undefined && !(utilization > 0 && utilization <= 1)) {
    throw new VllmConfigInvalidError('overrides.gpuMemoryUtilization', utilization, 'a fraction in (0, 1]');
  }
  if (overrides.servedModelName !== undefined && overrides.servedModelName.length === 0) {
    throw new VllmConfigInvalidError('overrides.servedModelName', overrides.servedModelName, 'a non-empty string');
  }
}

/**
 * Starts one simulated vLLM replica: an engine on `clock`, driven in real time, behind an HTTP server on
 * 127.0.0.1 (a free port) with `POST /v1/completions`, `GET /v1/models`, `GET /health` and `GET /metrics`.
 * Until `startup.modelLoadSeconds` have passed every endpoint answers 503 (a real server is not listening yet).
 */
export async function startVllmReplica(options: StartVllmReplicaOptions): Promise<VllmReplica> {
  const { profile, identity, clock } = options;
  const overrides = options.overrides ?? {};
  checkOverrides(overrides);
  const engine = new VllmEngine(engineConfigFromProfile(profile, overrides), clock);
  const driver = new RealtimeEngineDriver(engine, clock);
  const servedModelName = overrides.servedModelName ?? profile.model;
  const gpuMemoryUtilization = overrides.gpuMemoryUtilization ?? profile.gpu.gpuMemoryUtilization;
  const { maxModelLen } = engine.config;
  // CacheConfig fields as vLLM's metrics_info() renders them (Python str() of each value).
  const cacheConfig = {
    block_size: String(engine.config.blockSize),
    cache_dtype: 'auto',
    calculate_kv_scales: 'False',
    cpu_offload_gb: '0',
    enable_prefix_caching: 'True',
    gpu_memory_utilization: pythonFloatRepr(gpuMemoryUtilization),
    num_cpu_blocks: 'None',
    num_gpu_blocks: String(engine.config.kvCacheBlocks),
    prefix_caching_hash_algo: 'sha256',
    swap_space: '4',
  };
  const httpCounts = new Map<string, HttpRequestCount>();
  let requestsReceived = 0;
  let metricsUnavailable = false;

  function countHttp(handler: string, method: string, status: number): void {
    if (UNINSTRUMENTED.has(handler)) return;
    const group = `${Math.floor(status / 100)}xx`;
    const key = `${handler} ${method} ${group}`;
    const entry = httpCounts.get(key) ?? { handler, method, status: group, count: 0 };
    entry.count += 1;
    httpCounts.set(key, entry);
  }

  function handleModels(res: ServerResponse): void {
    const created = Math.floor(clock.now() / 1000);
    sendJson(res, 200, {
      object: 'list',
      data: [
        {
          id: servedModelName,
          object: 'model',
          created,
          owned_by: 'vllm',
          root: profile.model,
          parent: null,
          max_model_len: maxModelLen,
          permission: [
            {
              id: `modelperm-${randomUUID().replaceAll('-', '')}`,
              object: 'model_permission',
              created,
              allow_create_engine: false,
              allow_sampling: true,
              allow_logprobs: true,
              allow_search_indices: false,
              allow_view: true,
              allow_fine_tuning: false,
              organization: '*',
              group: null,
              is_blocking: false,
            },
          ],
        },
      ],
    });
  }

  function handleMetrics(res: ServerResponse): void {
    const stats = engine.stats();
    const body = renderVllmMetrics({
      version: profile.vllmVersion,
      modelName: servedModelName,
      metrics: engine.metrics,
      running: stats.running,
      waiting: stats.waiting,
      kvCacheUsage: stats.kvCacheUsage,
      createdSeconds: engine.loadedAtMs / 1000,
      cacheConfig,
      httpRequests: [...httpCounts.values()],
    });
    res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  async function handleCompletions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    if (text === undefined) {
      sendError(res, 413, 'BadRequestError', `Request body larger than ${MAX_BODY_BYTES} bytes.`);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      sendError(res, 400, 'BadRequestError', `Invalid JSON body: ${(error as Error).message}`);
      return;
    }
    const parsed = parseCompletionRequest(body, maxModelLen);
    if (parsed.model !== undefined && parsed.model !== servedModelName) {
      // vLLM answers an unknown model with 404 NotFoundError (serving_engine.py `_check_model`).
      sendError(res, 404, 'NotFoundError', `The model \`${parsed.model}\` does not exist.`);
      return;
    }
    const completion: CompletionIdentity = {
      id: `cmpl-${randomUUID().replaceAll('-', '')}`,
      created: Math.floor(clock.now() / 1000),
      model: servedModelName,
    };
    let generated = '';
    let finished = false;
    const onEvent = (event: RequestEvent): void => {
      if (res.destroyed) return;
      if (event.type === 'token') {
        const tokenText = generatedTokenText(event.index);
        if (parsed.stream) {
          const chunk = completionChunk(completion, tokenText, event.last ? 'length' : null);
          res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        } else {
          generated += tokenText;
        }
        return;
      }
      if (event.type !== 'finished' || event.result.finishReason !== 'length') return;
      finished = true;
      const tokens = usage(event.result.promptTokens, event.result.generatedTokens);
      if (parsed.stream) {
        if (parsed.includeUsage) res.write(`data: ${JSON.stringify(usageChunk(completion, tokens))}\n\n`);
        res.end('data: [DONE]\n\n');
      } else {
        sendJson(res, 200, completionResponse(completion, generated, 'length', tokens));
      }
    };
    const { id } = engine.submit({ promptTokens: parsed.promptTokens, maxTokens: parsed.maxTokens }, onEvent);
    if (parsed.stream && !finished) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      res.flushHeaders();
    }
    // The client went away before the last token: vLLM aborts the request (finished_reason "abort").
    res.on('close', () => {
      if (!finished) engine.abort(id);
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    requestsReceived += 1;
    const method = req.method ?? 'GET';
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    const expected = ROUTES[pathname];
    const handler = expected === undefined ? 'none' : pathname;
    res.on('finish', () => countHttp(handler, method, res.statusCode));
    if (expected === undefined) {
      sendJson(res, 404, { detail: 'Not Found' });
      return;
    }
    if (method !== expected) {
      sendJson(res, 405, { detail: 'Method Not Allowed' });
      return;
    }
    if (pathname === '/metrics' && metricsUnavailable) {
      sendError(res, 503, 'ServiceUnavailableError', 'The metrics endpoint is unavailable (twin fault scrape-gap).');
      return;
    }
    if (!engine.isLoaded()) {
      if (pathname === '/health') {
        res.writeHead(503).end();
      } else {
        const error = new VllmNotLoadedError(clock.now(), engine.loadedAtMs);
        sendError(res, 503, 'ServiceUnavailableError', error.message);
      }
      return;
    }
    try {
      if (pathname === '/health') res.writeHead(200, { 'content-length': 0 }).end();
      else if (pathname === '/metrics') handleMetrics(res);
      else if (pathname === '/v1/models') handleModels(res);
      else await handleCompletions(req, res);
    } catch (error) {
      if (res.headersSent) {
        res.destroy(error as Error);
      } else if (error instanceof VllmRequestInvalidError) {
        sendError(res, error.status, error.type, error.message, error.param);
      } else if (error instanceof VllmNotLoadedError) {
        sendError(res, 503, 'ServiceUnavailableError', error.message);
      } else {
        sendError(res, 500, 'InternalServerError', (error as Error).message);
      }
    }
  }

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    metricsUrl: `${url}/metrics`,
    identity,
    servedModelName,
    engine,
    telemetry: () => ({ ...engine.telemetry(), requestsReceivedTotal: requestsReceived }),
    setMetricsUnavailable: (unavailable) => {
      metricsUnavailable = unavailable;
    },
    stop: async () => {
      // Idempotent: a replica stopped already (a crashed server, a test) is stopped again when its Pod goes.
      if (!server.listening) return;
      driver.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
