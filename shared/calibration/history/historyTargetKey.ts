import { CalibrationHistoryRecordInvalidError } from './errors.js';

/** `<cluster>/<namespace>/<deployment>`: the history's partition key for one calibrated deployment. */
export function historyTargetKey(target: { cluster: string; namespace: string; deployment: string }): string {
  const key = `${target.cluster}/${target.namespace}/${target.deployment}`;
  assertTargetKey(key);
  return key;
}

const SEGMENT = /^[^/\s]+$/;

/** Throws CalibrationHistoryRecordInvalidError unless `key` is three non-empty parts joined by `/`. */
export function assertTargetKey(key: unknown, field = 'targetKey'): asserts key is string {
  const parts = typeof key === 'string' ? key.split('/') : [];
  if (parts.length !== 3 || !parts.every((part) => SEGMENT.test(part)))
    throw new CalibrationHistoryRecordInvalidError(
      field,
      `${JSON.stringify(key)} is not a target key`,
      '<cluster>/<namespace>/<deployment>, three non-empty parts without spaces, e.g. "prod-use2/default/vllm-app"',
    );
}
