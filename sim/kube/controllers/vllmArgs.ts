import type { VllmReplicaOverrides } from '../../vllm/server.js';
import { WorkloadContainerArgsError } from './errors.js';
import type { ContainerSpec } from './podStatus.js';

/** The vLLM flags the twin honours; every other flag is accepted and ignored (it does not change the model). */
export const VLLM_FLAGS = {
  maxNumSeqs: '--max-num-seqs',
  maxModelLen: '--max-model-len',
  gpuMemoryUtilization: '--gpu-memory-utilization',
  servedModelName: '--served-model-name',
  model: '--model',
} as const;

/**
 * The replica overrides of a vLLM container, from its command and args as `vllm serve` / the OpenAI api_server
 * parse them: `--flag value` or `--flag=value`, `vllm serve <model>` as the model, and `--model` as the served name
 * when `--served-model-name` is absent (vLLM names the model after its path then). A bad value throws
 * WorkloadContainerArgsError naming the flag, as vLLM's argparse exits on it.
 */
export function vllmOverridesFromContainer(pod: string, container: ContainerSpec): VllmReplicaOverrides {
  const tokens = [...(container.command ?? []), ...(container.args ?? [])];
  const values = new Map<string, string>();
  let positionalModel: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as string;
    if (token === 'serve' && i + 1 < tokens.length && !(tokens[i + 1] as string).startsWith('-')) {
      positionalModel = tokens[i + 1];
      i += 1;
      continue;
    }
    if (!token.startsWith('--')) continue;
    const eq = token.indexOf('=');
    const flag = eq >= 0 ? token.slice(0, eq) : token;
    if (!(Object.values(VLLM_FLAGS) as string[]).includes(flag)) continue;
    const value = eq >= 0 ? token.slice(eq + 1) : tokens[i + 1];
    if (value === undefined || (eq < 0 && value.startsWith('--')))
      throw new WorkloadContainerArgsError(pod, flag, undefined, 'a value after the flag');
    if (eq < 0) i += 1;
    values.set(flag, value);
  }

  const overrides: VllmReplicaOverrides = {};
  const maxNumSeqs = values.get(VLLM_FLAGS.maxNumSeqs);
  if (maxNumSeqs !== undefined) overrides.maxNumSeqs = positiveInt(pod, VLLM_FLAGS.maxNumSeqs, maxNumSeqs);
  const maxModelLen = values.get(VLLM_FLAGS.maxModelLen);
  if (maxModelLen !== undefined) overrides.maxModelLen = positiveInt(pod, VLLM_FLAGS.maxModelLen, maxModelLen);
  const utilization = values.get(VLLM_FLAGS.gpuMemoryUtilization);
  if (utilization !== undefined) {
    const n = Number(utilization);
    if (!(n > 0 && n <= 1))
      throw new WorkloadContainerArgsError(pod, VLLM_FLAGS.gpuMemoryUtilization, utilization, 'a fraction in (0, 1]');
    overrides.gpuMemoryUtilization = n;
  }
  const served = values.get(VLLM_FLAGS.servedModelName) ?? values.get(VLLM_FLAGS.model) ?? positionalModel;
  if (served !== undefined) {
    if (served.trim() === '')
      throw new WorkloadContainerArgsError(pod, VLLM_FLAGS.servedModelName, served, 'a non-empty model name');
    overrides.servedModelName = served;
  }
  return overrides;
}

function positiveInt(pod: string, flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n <= 0)
    throw new WorkloadContainerArgsError(pod, flag, text, 'a positive integer');
  return n;
}

/** Whether a container runs vLLM (its image names vllm, e.g. `vllm/vllm-openai:v0.11.0`). */
export function isVllmContainer(container: ContainerSpec): boolean {
  return (container.image ?? '').toLowerCase().includes('vllm');
}
