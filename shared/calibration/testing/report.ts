/** A whole calibration report built from the guide-shaped steps, through the product's own functions. */
import type { KubeObject } from '../../kube/index.js';
import { analyze } from '../analyze.js';
import type { CalibrationInput } from '../input.js';
import { buildProvenance } from '../provenance.js';
import { buildReport } from '../report.js';
import type { CalibrationReport, StepMeasurement, ThresholdChange } from '../types.js';
import { GUIDE_STEP_SPECS, buildSteps, testInput } from './steps.js';

/** The guide's Deployment as the live object: vLLM on one L40S of a g6e.4xlarge. */
export function liveDeployment(input: CalibrationInput): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: input.target.deployment, namespace: input.target.namespace, generation: 3 },
    spec: {
      replicas: 1,
      template: {
        metadata: { labels: { app: input.target.deployment } },
        spec: {
          nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-L40S', 'node.kubernetes.io/instance-type': 'g6e.4xlarge' },
          containers: [
            {
              name: 'vllm',
              image: 'vllm/vllm-openai:v0.11.0',
              args: ['--model', input.target.model, '--max-model-len', '32768', '--gpu-memory-utilization', '0.9'],
              resources: { limits: { 'nvidia.com/gpu': '1' } },
            },
          ],
        },
      },
    },
  };
}

/** The dry-run change of the guide's ScaledObject from its hand-set values to the calibrated ones. */
export const GUIDE_CHANGE: ThresholdChange = {
  scaledObject: { namespace: 'default', name: 'vllm-inference-app' },
  previous: { queueDepthPerPod: '10', queueActivation: '1', p95LatencySeconds: '8' },
  next: { queueDepthPerPod: '25', queueActivation: '1', p95LatencySeconds: '5' },
  diff: '- queue threshold: "10"\n+ queue threshold: "25"\n- p95 threshold: "8"\n+ p95 threshold: "5"\n',
  applied: false,
};

export interface ReportOptions {
  input?: CalibrationInput;
  steps?: StepMeasurement[];
  change?: ThresholdChange | null;
}

/** The report of the guide's run (or of the given steps). */
export function guideReport(options: ReportOptions = {}): CalibrationReport {
  const input = options.input ?? testInput();
  const steps = options.steps ?? buildSteps(GUIDE_STEP_SPECS, input);
  const provenance = buildProvenance({
    executionId: 'arn:aws:states:us-east-2:123456789012:execution:vllm-calibration:guide-run',
    executionName: 'guide-run',
    startedAt: '2025-06-02T09:00:00.000Z',
    finishedAt: '2025-06-02T09:10:30.000Z',
    input,
    deployment: liveDeployment(input),
    strategy: 'linear',
  });
  return buildReport(
    provenance,
    steps,
    analyze(steps, input),
    options.change === undefined ? GUIDE_CHANGE : options.change,
  );
}
