import * as z from 'zod';
import { TARGET_NAME_RULES } from '../../config/index.js';
import {
  KEDA_KINDS,
  liveThresholdValues,
  thresholdValuesDiff,
  writeThresholdValues,
  type ThresholdValues,
} from '../../keda/index.js';
import { CalibrationRollbackConflictError, CalibrationRollbackNotFoundError } from '../errors.js';
import { historyTargetKey, type HistoryRecord } from '../history/index.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import type { CalibrationFunction } from './step.js';

const matching = (rule: { pattern: RegExp; accepted: string }) =>
  z.string({ error: `is required: ${rule.accepted}` }).regex(rule.pattern, { error: `accepted: ${rule.accepted}` });

/** The rollback's input: the target (as a calibration names it) and, optionally, the execution to restore. */
const event = z.strictObject({
  target: z.object({
    cluster: matching(TARGET_NAME_RULES.cluster),
    region: z.string().min(1),
    namespace: matching(TARGET_NAME_RULES.dns1123Label),
    deployment: matching(TARGET_NAME_RULES.dns1123Label),
  }),
  /** Restore what this execution wrote (or would have written: a dry run's thresholds); default: undo the last change. */
  execution: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,80}$/, {
      error: 'must be a Step Functions execution name (1-80 letters, digits, "-", "_")',
    })
    .optional(),
  /** Only say what would change. */
  dryRun: z.boolean().default(false),
});
export type RollbackInput = z.input<typeof event>;

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'history'>;

/** What a rollback did (or would do, `applied: false`). */
export interface RollbackResult {
  targetKey: string;
  scaledObject: { namespace: string; name: string };
  /** The execution whose written thresholds are replaced. */
  undid: string;
  /** The execution whose thresholds are restored; null: the values from before `undid`. */
  restoredFrom: string | null;
  before: ThresholdValues;
  after: ThresholdValues;
  /** `--- <ScaledObject> (live)` / `+++ ... (rolled back)` hunks; empty when nothing changes. */
  diff: string;
  applied: boolean;
  /** The history record of the rollback (its execution name); null for a dry run. */
  recorded: string | null;
}

/** How far back the history is read. */
const HISTORY_DEPTH = 100;

/**
 * `vllm-pilot calibrate rollback` and the rollback Lambda: restores a target's ScaledObject thresholds from its
 * calibration history. The last change (the newest record that wrote the ScaledObject: a calibration with
 * scaledObject.apply, or an earlier rollback) is undone: by default to the values it replaced, or to what a named
 * execution derived. The live ScaledObject must still hold what that change wrote: when someone edited it, or a GitOps
 * controller reverted it, the rollback refuses (CalibrationRollbackConflictError, with the fields), changing nothing.
 * The rollback is written to the history as a record of its own, so it can itself be rolled back.
 */
export async function rollback(ports: Ports, input: z.output<typeof event>): Promise<RollbackResult> {
  const targetKey = historyTargetKey(input.target);
  const records = await ports.history.list(targetKey, HISTORY_DEPTH);
  const last = records.find((r) => r.rollback !== undefined || r.report.change?.applied === true);
  if (last === undefined)
    throw new CalibrationRollbackNotFoundError(
      `no calibration of ${targetKey} wrote its ScaledObject (of ${records.length} record(s) in the history): ` +
        'nothing to roll back',
    );
  const written = writtenBy(last);
  const ref = written.scaledObject;

  let restored: HistoryRecord | null = null;
  let after: ThresholdValues = written.replaced;
  if (input.execution !== undefined) {
    const named = records.find((r) => r.executionName === input.execution && r.rollback === undefined);
    if (named === undefined || named.report.change === null)
      throw new CalibrationRollbackNotFoundError(
        `execution ${input.execution} is not a calibration of ${targetKey} with thresholds in the history; ` +
          `accepted: one of ${listNames(records.filter((r) => r.rollback === undefined && r.report.change !== null))}`,
      );
    restored = named;
    after = named.report.change.next;
  }

  const cluster = await ports.cluster(input.target);
  const live = await cluster.get({ ...KEDA_KINDS.scaledObject, namespace: ref.namespace, name: ref.name });
  if (live === undefined)
    throw new CalibrationRollbackNotFoundError(`ScaledObject ${ref.namespace}/${ref.name} does not exist any more`);
  const before = liveThresholdValues(live);
  // Only the fields that change wrote (a change from before the metricType was managed did not write it).
  const changed = (Object.keys(before) as Array<keyof ThresholdValues>).filter(
    (k) => written.wrote[k] !== undefined && before[k] !== written.wrote[k],
  );
  if (changed.length > 0)
    throw new CalibrationRollbackConflictError(
      `ScaledObject ${ref.namespace}/${ref.name} changed since ${last.executionName} wrote it (` +
        changed
          .map((k) => `${k} is ${JSON.stringify(before[k])}, written ${JSON.stringify(written.wrote[k])}`)
          .join('; ') +
        '): nothing rolled back; someone edited it or a GitOps controller reverted it: change it there',
    );
  const restoredFrom = restored?.executionName ?? null;
  const diff = thresholdValuesDiff(live, after, 'rolled back');
  const result = { targetKey, scaledObject: ref, undid: last.executionName, restoredFrom, before, after, diff };
  if (input.dryRun) return { ...result, applied: false, recorded: null };

  await writeThresholdValues(cluster, ref, after);
  const finishedAt = new Date(ports.clock.now()).toISOString();
  const recorded = `rollback-${finishedAt.replace(/[-:.]/g, '').slice(0, 15)}`;
  const source =
    restoredFrom === null ? last : (records.find((r) => r.executionName === restoredFrom) as HistoryRecord);
  await ports.history.put({
    targetKey,
    finishedAt,
    executionName: recorded,
    report: source.report,
    thresholds: restored === null ? null : restored.thresholds,
    previousThresholds: before,
    podTemplateHash: source.podTemplateHash,
    rollback: { undid: last.executionName, restoredFrom, before, after, diff },
  });
  ports.logger.info('thresholds rolled back', { ...result, recorded });
  return { ...result, applied: true, recorded };
}

/** What a record wrote into the ScaledObject, and what that replaced. */
function writtenBy(record: HistoryRecord): {
  scaledObject: { namespace: string; name: string };
  wrote: ThresholdValues;
  replaced: ThresholdValues;
} {
  const change = record.report.change;
  if (record.rollback !== undefined && change !== null)
    return { scaledObject: change.scaledObject, wrote: record.rollback.after, replaced: record.rollback.before };
  if (change === null) throw new CalibrationRollbackNotFoundError(`record ${record.executionName} holds no change`);
  return { scaledObject: change.scaledObject, wrote: change.next, replaced: change.previous };
}

function listNames(records: readonly HistoryRecord[]): string {
  return records.length === 0 ? '(none)' : records.map((r) => r.executionName).join(', ');
}

export const rollbackFunction = {
  name: 'rollback',
  label: 'Rollback',
  event,
  run: rollback,
} satisfies CalibrationFunction<typeof event, RollbackResult, Ports>;
