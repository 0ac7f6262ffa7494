import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { EvaluatorHeartbeat } from '../../alerts/heartbeat/index.js';
import { ampRuleGroupsNamespaceData } from '../../alerts/export/index.js';
import { ALERT_RULES, DEFAULT_ALERT_SETTINGS } from '../../alerts/rules/index.js';
import {
  ALERTING_ENGINES,
  CHECK_IDS,
  type CheckResult,
  type Evidence,
  type PreflightCheck,
  type PreflightContext,
} from '../types.js';
import { listText, settingEvidence } from '../workload.js';

/** A heartbeat older than this many evaluation intervals means the evaluator has stopped (issue 16). */
export const HEARTBEAT_MAX_AGE_INTERVALS = 2;

type Outcome = Omit<CheckResult, 'id' | 'item' | 'title'>;

/**
 * Item 5: the alert rules run, shown by evidence, not by a setting. With the Lambda engine: the evaluator's heartbeat
 * (the alert state table) is younger than two evaluation intervals and its last cycle evaluated every target. With
 * the AMP engine: AMP's rule groups namespace holds this target's group, equal to the one the rules generate
 * (shared/alerts/export), so AMP's ruler runs exactly the product's rules.
 */
export const alertRules: PreflightCheck = {
  id: CHECK_IDS.alertRules,
  item: 5,
  title: 'Alert rules registered (5)',
  run(context) {
    return context.settings.alertingEngine === ALERTING_ENGINES.amp ? ampRules(context) : evaluatorHeartbeat(context);
  },
};

async function evaluatorHeartbeat(context: PreflightContext): Promise<Outcome> {
  const engine = settingEvidence('alertingEngine', ALERTING_ENGINES.lambda);
  const source = context.alerting.heartbeat;
  if (source === undefined)
    return {
      status: 'fail',
      reason: "could not check: preflight was given no access to the evaluator's heartbeat (the alert state table)",
      evidence: [engine],
      fix: 'Set ALERT_STATE_TABLE on the preflight function (the stack does) and grant it dynamodb:GetItem on the table',
    };
  const beat = await source.read(context.signal);
  const nowMs = context.clock.now();
  const evidence: Evidence[] = [
    engine,
    {
      kind: 'record',
      store: 'alert state table',
      key: 'evaluator heartbeat',
      found: beat !== undefined,
      ...(beat === undefined ? {} : { detail: heartbeatDetail(beat, nowMs) }),
    },
  ];
  const fix =
    'Look at the alert-evaluator function: its schedule (EventBridge rule enabled?), its Errors and its logs ' +
    '("target failed" lines name the cause); the heartbeat alarm on the operations topic says since when';
  if (beat === undefined)
    return {
      status: 'fail',
      reason: 'the alert evaluator has never recorded a heartbeat: no evaluation cycle has run, so no alert can fire',
      evidence,
      fix,
    };
  const ageS = Math.max(0, Math.round((nowMs - beat.lastCycleAtMs) / 1000));
  const limitS = HEARTBEAT_MAX_AGE_INTERVALS * beat.intervalSeconds;
  const last = `last cycle at ${new Date(beat.lastCycleAtMs).toISOString()}, ${ageS} s ago`;
  if (nowMs - beat.lastCycleAtMs > limitS * 1000)
    return {
      status: 'fail',
      reason:
        `the alert evaluator has stopped: its ${last} (more than ${HEARTBEAT_MAX_AGE_INTERVALS} evaluation intervals, ` +
        `${limitS} s)${beat.ok ? '' : `, and that cycle failed for ${problemsText(beat.failedTargets)}`}`,
      evidence,
      fix,
    };
  if (!beat.ok)
    return {
      status: 'fail',
      reason: `the alert evaluator runs, but its ${last}, failed for ${problemsText(beat.failedTargets)}${lastOk(beat)}`,
      evidence,
      fix,
    };
  const names = ALERT_RULES.map((rule) => rule.name);
  const partial = beat.partialTargets.find((p) => p.target === context.target.name);
  if (partial !== undefined)
    return {
      status: 'warn',
      reason: `the alert evaluator runs (${last}), but evaluated this target only in part: ${partial.reason}`,
      evidence,
      fix,
    };
  return {
    status: 'pass',
    reason:
      `the alert evaluator runs the ${names.length} rules every ${beat.intervalSeconds} s: its ${last} ` +
      `(within ${limitS} s) evaluated all ${beat.targets} target(s)`,
    evidence,
  };
}

async function ampRules(context: PreflightContext): Promise<Outcome> {
  const namespace = context.settings.ampRuleNamespace;
  const engine = settingEvidence('alertingEngine', ALERTING_ENGINES.amp, { ampRuleNamespace: namespace ?? null });
  const source = context.alerting.ampRuleGroups;
  if (namespace === undefined || source === undefined)
    return {
      status: 'fail',
      reason:
        namespace === undefined
          ? 'could not check: no AMP rule groups namespace is configured for the AMP engine'
          : "could not check: preflight was given no access to AMP's rule groups (DescribeRuleGroupsNamespace)",
      evidence: [engine],
      fix: 'Set AMP_RULE_NAMESPACE on the preflight function (the stack does) and grant it aps:DescribeRuleGroupsNamespace',
    };
  const expected = expectedGroup(context);
  const data = await source.describeRuleGroups(namespace, context.signal);
  const record = (found: boolean, detail?: Record<string, unknown>): Evidence => ({
    kind: 'record',
    store: 'AMP rule groups namespace',
    key: namespace,
    found,
    ...(detail === undefined ? {} : { detail }),
  });
  const fix =
    'Deploy the stack again (its alert-installer installs the rules generated from shared/alerts/rules), or upload ' +
    'them: vllm-pilot alerts rules --format amp --targets <file> and aws amp put-rule-groups-namespace';
  if (data === undefined)
    return {
      status: 'fail',
      reason: `the AMP rule groups namespace ${namespace} does not exist: AMP's ruler evaluates none of the rules`,
      evidence: [engine, record(false)],
      fix,
    };
  let held: unknown;
  try {
    held = parseYaml(data) as unknown;
  } catch (error) {
    return {
      status: 'fail',
      reason: `the AMP rule groups namespace ${namespace} is not a Prometheus rules file: ${(error as Error).message}`,
      evidence: [engine, record(true)],
      fix,
    };
  }
  const groups = (held as { groups?: unknown } | null)?.groups;
  const group = Array.isArray(groups)
    ? (groups as Array<{ name?: unknown; rules?: unknown }>).find((g) => g?.name === expected.name)
    : undefined;
  if (group === undefined)
    return {
      status: 'fail',
      reason: `the AMP rule groups namespace ${namespace} has no group ${expected.name} for this target`,
      evidence: [engine, record(true, { groups: Array.isArray(groups) ? groups.length : 0 })],
      fix,
    };
  const differences = ruleDifferences(expected.rules, Array.isArray(group.rules) ? group.rules : []);
  const evidence = [engine, record(true, { group: expected.name, rules: expected.rules.length, differences })];
  if (differences.length > 0)
    return {
      status: 'fail',
      reason: `AMP's rules for this target differ from the generated ones (group ${expected.name} in ${namespace}): ${differences.join('; ')}`,
      evidence,
      fix,
    };
  return {
    status: 'pass',
    reason:
      `AMP's ruler holds the ${expected.rules.length} generated rules for this target ` +
      `(${listText(expected.rules.map((r) => r.alert))}) in ${namespace}, unchanged`,
    evidence,
  };
}

interface RuleShape {
  alert: string;
  [field: string]: unknown;
}

/** This target's group as the AMP engine installs it: the rules generated from the registry with its settings. */
function expectedGroup(context: PreflightContext): { name: string; rules: RuleShape[] } {
  const { name, cluster, namespace, deployment, model, clusterLabel } = context.target;
  const target = {
    name,
    cluster,
    namespace,
    deployment,
    model,
    ...(clusterLabel === undefined ? {} : { clusterLabel }),
  };
  const data = ampRuleGroupsNamespaceData({
    targets: [{ target, settings: context.target.alerts ?? DEFAULT_ALERT_SETTINGS }],
  });
  const [group] = (parseYaml(data) as { groups: Array<{ name: string; rules: RuleShape[] }> }).groups;
  if (group === undefined) throw new Error(`no rule is enabled for target ${name}: nothing for AMP to hold`);
  return group;
}

/** What differs between the generated rules and AMP's, by alert: missing, unexpected, or which fields changed. */
function ruleDifferences(expected: readonly RuleShape[], held: readonly unknown[]): string[] {
  const heldByName = new Map<string, Record<string, unknown>>();
  for (const rule of held)
    if (typeof (rule as { alert?: unknown } | null)?.alert === 'string')
      heldByName.set((rule as { alert: string }).alert, rule as Record<string, unknown>);
  const differences: string[] = [];
  for (const rule of expected) {
    const found = heldByName.get(rule.alert);
    if (found === undefined) {
      differences.push(`${rule.alert} is missing`);
      continue;
    }
    const fields = [...new Set([...Object.keys(rule), ...Object.keys(found)])].filter(
      (field) => !isDeepStrictEqual(rule[field], found[field]),
    );
    if (fields.length > 0) differences.push(`${rule.alert} differs in ${listText(fields)}`);
  }
  const unexpected = [...heldByName.keys()].filter((name) => !expected.some((rule) => rule.alert === name));
  if (unexpected.length > 0) differences.push(`unexpected ${listText(unexpected)}`);
  return differences;
}

function heartbeatDetail(beat: EvaluatorHeartbeat, nowMs: number): Record<string, unknown> {
  return {
    lastCycleAt: new Date(beat.lastCycleAtMs).toISOString(),
    ageSeconds: Math.round((nowMs - beat.lastCycleAtMs) / 1000),
    intervalSeconds: beat.intervalSeconds,
    ok: beat.ok,
    targets: beat.targets,
    failedTargets: beat.failedTargets,
    partialTargets: beat.partialTargets,
    lastOkAt: beat.lastOkAtMs === null ? null : new Date(beat.lastOkAtMs).toISOString(),
    evaluatorId: beat.evaluatorId,
  };
}

function problemsText(problems: EvaluatorHeartbeat['failedTargets']): string {
  return problems.length === 0
    ? 'an unknown target'
    : `target${problems.length === 1 ? '' : 's'} ${problems.map((p) => `${p.target} (${p.reason})`).join(', ')}`;
}

function lastOk(beat: EvaluatorHeartbeat): string {
  return beat.lastOkAtMs === null
    ? '; no cycle has succeeded since the heartbeat was first recorded'
    : `; the last successful cycle was at ${new Date(beat.lastOkAtMs).toISOString()}`;
}
