import * as z from 'zod';
import {
  type CalibrationHistoryStore,
  HISTORY_LIST_MAX_LIMIT,
  historyTargetKey,
  type HistoryRecord,
} from '../../shared/calibration/history/index.js';
import { ConfigInvalidError, TARGET_NAME_RULES, toConfigIssues } from '../../shared/config/index.js';
import { CliOptionInvalidError } from '../errors.js';
import { HistoryTableNotFoundError } from './errors.js';
import { type AccountFlagGroups, type AccountFlags, accountRequest } from './options.js';
import { openAccount } from './session.js';
import { TARGET_FLAGS } from './targets.js';

/** The flags `calibrate list|show` take against an account: the deployment and the stack's history table. */
export const HISTORY_ACCOUNT_FLAGS: AccountFlagGroups = { history: 'required' };

/** The deployment whose history is read: the history's key fields, checked as the stack checks them. */
const deploymentSchema = z.strictObject({
  cluster: z.string({ error: 'is required: the EKS cluster' }).regex(TARGET_NAME_RULES.cluster.pattern, {
    error: `is not valid; accepted: ${TARGET_NAME_RULES.cluster.accepted}`,
  }),
  namespace: z
    .string({ error: "is required: the Deployment's namespace" })
    .regex(TARGET_NAME_RULES.dns1123Label.pattern, {
      error: `is not valid; accepted: ${TARGET_NAME_RULES.dns1123Label.accepted}`,
    }),
  deployment: z.string({ error: 'is required: the vLLM Deployment' }).regex(TARGET_NAME_RULES.dns1123Label.pattern, {
    error: `is not valid; accepted: ${TARGET_NAME_RULES.dns1123Label.accepted}`,
  }),
});
export type HistoryDeployment = z.infer<typeof deploymentSchema>;

/** The deployment of the flags (--cluster, --namespace, --deployment), each problem named by its flag. */
export function historyDeployment(flags: AccountFlags): HistoryDeployment {
  const parsed = deploymentSchema.safeParse({
    ...(flags.cluster === undefined ? {} : { cluster: flags.cluster }),
    ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }),
    ...(flags.deployment === undefined ? {} : { deployment: flags.deployment }),
  });
  if (parsed.success) return parsed.data;
  throw new ConfigInvalidError(
    'target',
    toConfigIssues('', parsed.error.issues).map((issue) => ({
      path: TARGET_FLAGS[issue.path as 'cluster' | 'namespace' | 'deployment'] ?? issue.path,
      message: issue.message,
    })),
  );
}

/** Records of a deployment, newest first. */
export async function listHistory(
  history: CalibrationHistoryStore,
  deployment: HistoryDeployment,
  limit: number,
): Promise<HistoryRecord[]> {
  return history.list(historyTargetKey(deployment), Math.min(limit, HISTORY_LIST_MAX_LIMIT));
}

/** The record of `execution`, or a one-line refusal naming the executions there are. */
export async function findExecution(
  history: CalibrationHistoryStore,
  deployment: HistoryDeployment,
  execution: string,
): Promise<HistoryRecord> {
  const records = await history.list(historyTargetKey(deployment), HISTORY_LIST_MAX_LIMIT);
  const record = records.find((r) => r.executionName === execution);
  if (record !== undefined) return record;
  const known = records.slice(0, 5).map((r) => r.executionName);
  throw new CliOptionInvalidError(
    '<execution>',
    execution,
    known.length === 0
      ? `an execution of ${historyTargetKey(deployment)}, which has no calibration history yet`
      : `an execution of ${historyTargetKey(deployment)}: the latest are ${known.join(', ')}`,
  );
}

/**
 * Runs `read` against the deployed stack's history table in the user's account; a table that is not there is one
 * line naming it and where to find the right name.
 */
export async function withAccountHistory<T>(
  flags: AccountFlags,
  read: (history: CalibrationHistoryStore) => Promise<T>,
): Promise<T> {
  const request = accountRequest(flags, HISTORY_ACCOUNT_FLAGS);
  const account = await openAccount(request);
  try {
    if (account.history === undefined) throw new Error('unreachable: --history-table is required');
    return await read(account.history);
  } catch (error) {
    if (/ResourceNotFoundException/.test((error as Error).message))
      throw new HistoryTableNotFoundError(request.historyTable ?? '', request.region, { cause: error });
    throw error;
  } finally {
    account.close();
  }
}
