import { createHash } from 'node:crypto';

/**
 * Names and marks of what one execution creates. Derived from the execution name only, so a retried task (or a
 * redriven execution, which keeps its name) finds what the first attempt created instead of creating it twice.
 */

/** The label on every Job and ConfigMap of an execution: the cleanup deletes by it. */
export const EXECUTION_LABEL = 'vllm-eks-pilot/execution';

/** Annotations the calibration puts on the Deployment while it runs, so any cleanup can undo its changes. */
export const CALIBRATION_ANNOTATIONS = {
  /** The execution calibrating this Deployment (its label value). */
  execution: 'vllm-eks-pilot/calibration',
  /** `spec.replicas` before the calibration scaled it; `""` when the calibration created the Deployment. */
  replicasBefore: 'vllm-eks-pilot/replicas-before-calibration',
  /**
   * Written by Cleanup, kept after it: when the last calibration ended and the background it measured (JSON), so the
   * next one does not mistake that calibration's load, still in AMP's recent rates, for users.
   */
  lastCalibration: 'vllm-eks-pilot/last-calibration',
  /**
   * The lease on the pause (JSON, calibrationLease.ts): the execution's full name and ARN, the ScaledObject it paused
   * and when the lease expires, so the sweep can release a target whose execution ended without its cleanup.
   */
  lease: 'vllm-eks-pilot/calibration-lease',
} as const;

// Its home is beside the input, which bounds a plan's duration by it (input.ts must not import workflow/).
export { EXECUTION_TIMEOUT_SECONDS } from '../executionTimeout.js';

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

export interface ExecutionNames {
  /** First 8 hex digits of sha256(execution name). */
  hash: string;
  /** The EXECUTION_LABEL value: the execution name when it is a valid label value, else `calib-<hash>`. */
  label: string;
  /** The k6 script ConfigMap. */
  configMap: string;
  warmupJob: string;
  /** The Job of load step `index` (0-based). */
  loadJob(index: number): string;
}

/** The names of an execution's objects: `calib-<hash>-k6`, `calib-<hash>-warmup`, `calib-<hash>-s<index>`. */
export function executionNames(executionName: string): ExecutionNames {
  const hash = createHash('sha256').update(executionName).digest('hex').slice(0, 8);
  const prefix = `calib-${hash}`;
  return {
    hash,
    label: LABEL_VALUE.test(executionName) ? executionName : prefix,
    configMap: `${prefix}-k6`,
    warmupJob: `${prefix}-warmup`,
    loadJob: (index) => `${prefix}-s${index}`,
  };
}

/** Step Functions execution names: at most 80 characters. */
const EXECUTION_NAME_MAX = 80;

/**
 * The name of the child execution that calibrates entry `index` of a many-target execution: `<parent>-t<n>` (n from
 * 1), so a redriven parent finds the same children. A parent name too long for the suffix is cut and a hash of it
 * added, so two long parent names sharing a prefix still name different children.
 */
export function childExecutionName(parentName: string, index: number): string {
  const suffix = `-t${index + 1}`;
  if (parentName.length + suffix.length <= EXECUTION_NAME_MAX) return `${parentName}${suffix}`;
  const hash = createHash('sha256').update(parentName).digest('hex').slice(0, 8);
  return `${parentName.slice(0, EXECUTION_NAME_MAX - suffix.length - hash.length - 1)}-${hash}${suffix}`;
}
