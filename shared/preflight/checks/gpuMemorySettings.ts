import { historyTargetKey } from '../../calibration/history/index.js';
import { matchCalibration } from '../calibrationMatch.js';
import { CHECK_IDS, type CheckStatus, type Evidence, type PreflightCheck } from '../types.js';
import {
  argsOf,
  listText,
  loadDeployment,
  parseVllmArgs,
  podTemplateOf,
  settingEvidence,
  VLLM_ARG_DEFAULTS,
  VLLM_ARGS,
  vllmContainerOf,
} from '../workload.js';

/** The monitoring guide's recommendation ("Commonly missed items": 0.85; vLLM's default 0.9 risks OOM). */
const RECOMMENDED_UTILIZATION = 0.85;

/**
 * Item 10: `--gpu-memory-utilization` at most settings.gpuMemoryUtilizationWarnAbove (else warn), and
 * `--max-model-len` set (else fail: vLLM then reserves KV cache for the model's longest context). Says when either
 * differs from what the latest calibration measured.
 */
export const gpuMemorySettings: PreflightCheck = {
  id: CHECK_IDS.gpuMemorySettings,
  item: 10,
  title: 'gpu_memory_utilization / max_model_len',
  async run(context) {
    const { settings, target } = context;
    const template = podTemplateOf(await loadDeployment(context));
    const flags = parseVllmArgs(argsOf(vllmContainerOf(template)));
    const utilizationText = flags.get(VLLM_ARGS.gpuMemoryUtilization);
    const utilization = utilizationText === undefined ? undefined : Number(utilizationText);
    const maxModelLen = flags.get(VLLM_ARGS.maxModelLen);
    const evidence: Evidence[] = [
      settingEvidence(VLLM_ARGS.gpuMemoryUtilization, utilization ?? null, {
        default: VLLM_ARG_DEFAULTS.gpuMemoryUtilization,
        warnAbove: settings.gpuMemoryUtilizationWarnAbove,
        recommended: RECOMMENDED_UTILIZATION,
      }),
      settingEvidence(VLLM_ARGS.maxModelLen, maxModelLen === undefined ? null : Number(maxModelLen)),
    ];
    const parts: string[] = [];
    const fixes: string[] = [];
    let status: CheckStatus = 'pass';
    if (maxModelLen === undefined) {
      status = 'fail';
      parts.push(`${VLLM_ARGS.maxModelLen} is not set: vLLM reserves KV cache for the model's maximum context`);
      fixes.push(`set ${VLLM_ARGS.maxModelLen} to the longest prompt + output you serve (e.g. 8192)`);
    } else parts.push(`${VLLM_ARGS.maxModelLen} ${maxModelLen}`);
    if (utilization === undefined) {
      parts.push(
        `${VLLM_ARGS.gpuMemoryUtilization} not set (vLLM's default ${VLLM_ARG_DEFAULTS.gpuMemoryUtilization}; the guide recommends ${RECOMMENDED_UTILIZATION})`,
      );
    } else if (!Number.isFinite(utilization) || utilization > settings.gpuMemoryUtilizationWarnAbove) {
      if (status === 'pass') status = 'warn';
      parts.push(
        `${VLLM_ARGS.gpuMemoryUtilization} ${utilizationText ?? ''} is above ${settings.gpuMemoryUtilizationWarnAbove} (OOM risk; the guide recommends ${RECOMMENDED_UTILIZATION})`,
      );
      fixes.push(`set ${VLLM_ARGS.gpuMemoryUtilization} ${RECOMMENDED_UTILIZATION}`);
    } else parts.push(`${VLLM_ARGS.gpuMemoryUtilization} ${utilizationText ?? ''}`);

    const key = historyTargetKey(target);
    const record = await context.history.latest(key);
    if (record !== undefined) {
      const { memoryDifferences } = matchCalibration(record, template, target.model);
      evidence.push({
        kind: 'record',
        store: 'calibration-history',
        key,
        found: true,
        detail: { executionName: record.executionName, memoryDifferences },
      });
      if (memoryDifferences.length > 0)
        parts.push(`differs from calibration ${record.executionName}: ${listText(memoryDifferences)} (recalibrate)`);
    }
    const reason = parts.join('; ');
    return status === 'pass'
      ? { status, reason, evidence }
      : {
          status,
          reason,
          evidence,
          fix: `In the vLLM container args: ${fixes.join('; ')} (vllm-pilot render deployment --set maxModelLen=8192 --set gpuMemoryUtilization=0.85)`,
        };
  },
};
