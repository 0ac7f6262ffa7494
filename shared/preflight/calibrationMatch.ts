/**
 * Whether the latest calibration record describes the live Deployment (checks 8 and 10). The two memory flags are
 * compared apart: check 10 owns them, so changing one makes check 10 say so without making the record "stale".
 */
import { podTemplateHash } from '../calibration/index.js';
import type { HistoryRecord } from '../calibration/history/index.js';
import {
  argsOf,
  gpuCount,
  parseVllmArgs,
  servedModelOf,
  VLLM_ARGS,
  vllmContainerOf,
  type PodTemplate,
} from './workload.js';

/** The flags check 10 owns. */
export const MEMORY_FLAGS = [VLLM_ARGS.gpuMemoryUtilization, VLLM_ARGS.maxModelLen] as const;

export interface CalibrationMatch {
  /** The live template hashes as the record's. */
  sameTemplate: boolean;
  /** Differences in image, model, GPU count or vLLM args other than the memory flags, as `what: recorded → live`. */
  differences: string[];
  /** Differences in the memory flags, as `--flag: recorded → live`. */
  memoryDifferences: string[];
}

/** Compares the record's provenance with the live Pod template. */
export function matchCalibration(record: HistoryRecord, template: PodTemplate, targetModel: string): CalibrationMatch {
  const provenance = record.report.provenance;
  const container = vllmContainerOf(template);
  const liveArgs = argsOf(container);
  const sameTemplate = record.podTemplateHash === podTemplateHash(template.raw);
  const differences: string[] = [];
  const liveImage = container.image ?? '';
  if (provenance.image !== liveImage) differences.push(`image: ${provenance.image} → ${liveImage}`);
  const liveModel = servedModelOf(liveArgs) ?? targetModel;
  if (provenance.model !== liveModel) differences.push(`model: ${provenance.model} → ${liveModel}`);
  const recordedGpus = /^(\d+) × /.exec(provenance.gpu ?? '')?.[1];
  const liveGpus = gpuCount(container);
  if (recordedGpus !== undefined && liveGpus !== undefined && recordedGpus !== liveGpus)
    differences.push(`GPUs: ${recordedGpus} → ${liveGpus}`);
  const recorded = parseVllmArgs(provenance.vllmArgs);
  const live = parseVllmArgs(liveArgs);
  const memoryDifferences: string[] = [];
  for (const flag of [...new Set([...recorded.keys(), ...live.keys()])].sort()) {
    const before = recorded.get(flag);
    const after = live.get(flag);
    if (before === after) continue;
    const text = `${flag === '_' ? 'positional args' : flag}: ${before ?? '(unset)'} → ${after ?? '(unset)'}`;
    if ((MEMORY_FLAGS as readonly string[]).includes(flag)) memoryDifferences.push(text);
    else differences.push(text);
  }
  return { sameTemplate, differences, memoryDifferences };
}
