import { historyTargetKey } from '../../calibration/history/index.js';
import { matchCalibration } from '../calibrationMatch.js';
import { CHECK_IDS, type PreflightCheck } from '../types.js';
import { listText, loadDeployment, podTemplateOf } from '../workload.js';

const STORE = 'calibration-history';

/**
 * Item 8: a k6 load test found the saturation point of the Deployment as it runs now: the latest calibration record
 * has the live Pod template's hash, or the same image, model, GPU count and vLLM args (the two memory flags aside:
 * check 10 reports those). A record of another spec is stale; no record means no load test.
 */
export const loadTest: PreflightCheck = {
  id: CHECK_IDS.loadTest,
  item: 8,
  title: 'k6 load test: saturation point known',
  async run(context) {
    const { target } = context;
    const key = historyTargetKey(target);
    const template = podTemplateOf(await loadDeployment(context));
    const record = await context.history.latest(key);
    const fix = `Run a calibration of ${target.namespace}/${target.deployment}: vllm-pilot calibrate --aws --state-machine-arn <arn> (or start the calibration state machine from the Step Functions console)`;
    if (record === undefined) {
      return {
        status: 'warn',
        reason: `no calibration record for ${key}: the saturation point of this Deployment was never measured`,
        evidence: [{ kind: 'record', store: STORE, key, found: false }],
        fix,
      };
    }
    const match = matchCalibration(record, template, target.model);
    const { saturation, capacityRps } = record.report.analysis;
    const evidence = [
      {
        kind: 'record' as const,
        store: STORE,
        key,
        found: true,
        detail: {
          executionName: record.executionName,
          finishedAt: record.finishedAt,
          podTemplateHash: record.podTemplateHash,
          sameTemplate: match.sameTemplate,
          differences: match.differences,
          memoryDifferences: match.memoryDifferences,
          saturationRps: saturation.found ? saturation.rateRps : null,
          capacityRps: capacityRps?.value ?? null,
        },
      },
    ];
    const when = `calibration ${record.executionName} of ${record.finishedAt}`;
    if (match.sameTemplate) {
      return { status: 'pass', reason: `${when} measured this exact Pod template`, evidence };
    }
    if (match.differences.length === 0) {
      const memory =
        match.memoryDifferences.length === 0
          ? ''
          : `; memory flags changed since (${listText(match.memoryDifferences)}), see check 10`;
      return {
        status: 'pass',
        reason: `${when} measured the same image, model, GPU and vLLM args (the Pod template differs in other fields)${memory}`,
        evidence,
      };
    }
    return {
      status: 'warn',
      reason: `stale: ${when} measured a different spec: ${listText(match.differences)}`,
      evidence,
      fix,
    };
  },
};
