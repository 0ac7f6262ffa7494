import { PREFLIGHT_CHECKS } from './registry.js';
import { unansweredOutcome } from '../unanswered.js';
import {
  CHECK_STATUSES,
  type CheckResult,
  type CheckStatus,
  type PreflightCheck,
  type PreflightContext,
  type PreflightReport,
} from '../types.js';

/**
 * Runs every check against one target, concurrently, and sums up. A check that throws does not stop the others: it
 * becomes `fail` with "could not check: <ErrorName>: <message>", because a check that cannot look has not passed.
 * When what it called never answered, the reason names the host, the wait and the fix instead (unanswered.ts).
 */
export async function runPreflight(
  context: PreflightContext,
  checks: readonly PreflightCheck[] = PREFLIGHT_CHECKS,
): Promise<PreflightReport> {
  const checkedAt = new Date(context.clock.now()).toISOString();
  const results = await Promise.all(checks.map((check) => runOne(check, context)));
  const counts: Record<CheckStatus, number> = { pass: 0, warn: 0, fail: 0 };
  for (const result of results) counts[result.status] += 1;
  const status = counts.fail > 0 ? CHECK_STATUSES.fail : counts.warn > 0 ? CHECK_STATUSES.warn : CHECK_STATUSES.pass;
  return { target: context.target, checkedAt, results, counts, status };
}

async function runOne(check: PreflightCheck, context: PreflightContext): Promise<CheckResult> {
  const head = { id: check.id, item: check.item, title: check.title };
  const started = context.clock.now();
  try {
    const outcome = await check.run(context);
    return { ...head, ...outcome };
  } catch (error) {
    const unanswered = unansweredOutcome(error, context.clock.now() - started);
    if (unanswered !== undefined)
      return {
        ...head,
        status: CHECK_STATUSES.fail,
        reason: `could not check: ${unanswered.reason}`,
        evidence: [],
        fix: unanswered.fix,
      };
    const name = error instanceof Error ? error.name : 'Error';
    const message = error instanceof Error ? error.message : String(error);
    return {
      ...head,
      status: CHECK_STATUSES.fail,
      reason: `could not check: ${name}: ${message}`,
      evidence: [],
      fix: 'Make the cluster API, AMP and the calibration history reachable with the rights of infra/ (RBAC, IAM), then run preflight again.',
    };
  }
}
