/**
 * vLLM's container args as the calibration and preflight read them: argparse's `--flag value` / `--flag=value`, and
 * the one engine limit the adaptive search uses, `--max-num-seqs` (how many sequences one replica decodes at once).
 */
import type { KubeObject } from '../kube/index.js';
import { vllmContainer, type TemplateContainer } from './provenance.js';

/** The argument list of the vLLM container as vLLM sees it (`args`, else `command`), as provenance records it. */
export function argsOf(container: TemplateContainer): string[] {
  return [...(container.args ?? container.command ?? [])];
}

/**
 * vLLM's flags as argparse reads them: `--flag value` or `--flag=value`; a flag followed by another flag (or by
 * nothing) is a switch with value `true`. Positional words (`vllm serve <model>`) are kept under `_`.
 */
export function parseVllmArgs(args: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i] as string;
    if (!token.startsWith('--')) {
      positional.push(token);
      continue;
    }
    const eq = token.indexOf('=');
    if (eq >= 0) {
      flags.set(token.slice(0, eq), token.slice(eq + 1));
      continue;
    }
    const next = args[i + 1];
    if (next === undefined || next.startsWith('--')) flags.set(token, 'true');
    else {
      flags.set(token, next);
      i += 1;
    }
  }
  if (positional.length > 0) flags.set('_', positional.join(' '));
  return flags;
}

/**
 * The Deployment's `--max-num-seqs` (per replica); null when its vLLM container does not set it. vLLM's default
 * then applies, which depends on its version and the GPU's memory (vllm/engine/arg_utils.py), so it is not guessed.
 */
export function maxNumSeqsOf(deployment: KubeObject): number | null {
  const containers = (deployment.spec as { template?: { spec?: { containers?: TemplateContainer[] } } } | undefined)
    ?.template?.spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0) return null;
  const value = Number(parseVllmArgs(argsOf(vllmContainer(containers))).get('--max-num-seqs'));
  return Number.isInteger(value) && value > 0 ? value : null;
}

/**
 * The Deployment's `--max-model-len` (the context in tokens: prompt plus generated); null when its vLLM container does
 * not set it (vLLM then takes the model's own, which only the model's config knows).
 */
export function maxModelLenOf(deployment: KubeObject): number | null {
  const containers = (deployment.spec as { template?: { spec?: { containers?: TemplateContainer[] } } } | undefined)
    ?.template?.spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0) return null;
  const value = Number(parseVllmArgs(argsOf(vllmContainer(containers))).get('--max-model-len'));
  return Number.isInteger(value) && value > 0 ? value : null;
}
