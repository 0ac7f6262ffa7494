import type { Profile } from '../../profile/profile.js';
import type { VllmReplica, VllmReplicaOverrides } from '../../vllm/server.js';
import { WorkloadContainerArgsError } from './errors.js';

/** The vLLM release each naming era of the profile stands for, when the image tag does not say. */
const VERSION_OF_ERA: Record<Profile['vllmVersion'], string> = { '0.9': '0.9.2', '0.11': '0.11.0', latest: '0.12.0' };

/** vLLM's log prefix: `INFO 05-12 10:00:00 [api_server.py:1896]` (UTC here). */
function prefix(level: 'INFO' | 'WARNING' | 'ERROR', nowMs: number, source: string): string {
  const iso = new Date(nowMs).toISOString();
  return `${level} ${iso.slice(5, 7)}-${iso.slice(8, 10)} ${iso.slice(11, 19)} [${source}]`;
}

/** The vLLM version a container runs: the image tag (`vllm/vllm-openai:v0.11.0`), else the profile's era. */
export function vllmVersionOf(image: string, profile: Profile): string {
  const tag = /:v?(\d+\.\d+\.\d+)/.exec(image)?.[1];
  return tag ?? VERSION_OF_ERA[profile.vllmVersion];
}

/** What vLLM prints when its container starts, up to the model load. */
export function vllmStartLines(
  nowMs: number,
  version: string,
  model: string,
  overrides: VllmReplicaOverrides,
): string[] {
  const args: Record<string, unknown> = { model_tag: model };
  if (overrides.servedModelName) args['served_model_name'] = [overrides.servedModelName];
  if (overrides.maxModelLen !== undefined) args['max_model_len'] = overrides.maxModelLen;
  if (overrides.gpuMemoryUtilization !== undefined) args['gpu_memory_utilization'] = overrides.gpuMemoryUtilization;
  if (overrides.maxNumSeqs !== undefined) args['max_num_seqs'] = overrides.maxNumSeqs;
  const python = JSON.stringify(args).replaceAll('"', "'").replaceAll(':', ': ').replaceAll(',', ', ');
  return [
    `${prefix('INFO', nowMs, '__init__.py:216')} Automatically detected platform cuda.`,
    `${prefix('INFO', nowMs, 'api_server.py:1896')} vLLM API server version ${version}`,
    `${prefix('INFO', nowMs, 'utils.py:233')} non-default args: ${python}`,
    `${prefix('INFO', nowMs, 'gpu_model_runner.py:2602')} Starting to load model ${model}...`,
    `${prefix('INFO', nowMs, 'default_loader.py:262')} Loading model weights ...`,
  ];
}

/** What vLLM prints once the model is loaded and the API server listens. */
export function vllmReadyLines(nowMs: number, replica: VllmReplica, loadSeconds: number, port: number): string[] {
  const { kvCacheBlocks, blockSize, maxModelLen } = replica.engine.config;
  const kvTokens = kvCacheBlocks * blockSize;
  return [
    `${prefix('INFO', nowMs, 'default_loader.py:267')} Loading model weights took ${loadSeconds.toFixed(2)} seconds`,
    `${prefix('INFO', nowMs, 'kv_cache_utils.py:1087')} GPU KV cache size: ${kvTokens.toLocaleString('en-US')} tokens`,
    `${prefix('INFO', nowMs, 'kv_cache_utils.py:1091')} Maximum concurrency for ${maxModelLen.toLocaleString('en-US')} tokens per request: ${(kvTokens / maxModelLen).toFixed(2)}x`,
    `${prefix('INFO', nowMs, 'api_server.py:1971')} Starting vLLM API server 0 on http://0.0.0.0:${port}`,
    'INFO:     Started server process [1]',
    'INFO:     Waiting for application startup.',
    'INFO:     Application startup complete.',
  ];
}

/** What vLLM prints when it refuses to start (argparse error, or an engine config it cannot run). */
export function vllmCrashLines(nowMs: number, error: unknown): string[] {
  if (error instanceof WorkloadContainerArgsError) {
    return [
      'usage: vllm serve [model_tag] [options]',
      `vllm serve: error: argument ${error.arg}: invalid value: ${JSON.stringify(error.value)}`,
    ];
  }
  const message = error instanceof Error ? error.message : String(error);
  return [
    `${prefix('ERROR', nowMs, 'core.py:708')} EngineCore failed to start.`,
    'Traceback (most recent call last):',
    `ValueError: ${message}`,
  ];
}

/** What vLLM prints when its engine dies of a fatal error while serving (the container then exits with code 1). */
export function vllmFatalErrorLines(nowMs: number): string[] {
  return [
    `${prefix('ERROR', nowMs, 'core.py:720')} EngineCore encountered a fatal error.`,
    'RuntimeError: CUDA error: an illegal memory access was encountered',
    `${prefix('ERROR', nowMs, 'async_llm.py:480')} AsyncLLM output_handler failed.`,
    'vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.',
  ];
}
