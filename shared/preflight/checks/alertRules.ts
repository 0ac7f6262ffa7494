import { ALERT_RULES } from '../../alerts/rules/index.js';
import { CHECK_IDS, type PreflightCheck } from '../types.js';
import { listText, settingEvidence, signalOf } from '../workload.js';

/** The rules API as an evidence "query" (it is not PromQL, but it is what was asked). */
const RULES_QUERY = 'GET api/v1/rules?type=alert';

/**
 * Item 5: the guide's five alert rules run somewhere: this control plane's alert-evaluator (a setting), or AMP's
 * ruler (its rule groups list every rule by name, in any group).
 */
export const alertRules: PreflightCheck = {
  id: CHECK_IDS.alertRules,
  item: 5,
  title: 'Alert rules registered (5)',
  async run(context) {
    const names = ALERT_RULES.map((rule) => rule.name);
    if (context.settings.controlPlaneEvaluatorEnabled) {
      return {
        status: 'pass',
        reason: `this control plane's alert-evaluator runs all ${names.length} rules (${listText(names)}) every minute`,
        evidence: [settingEvidence('controlPlaneEvaluatorEnabled', true, { rules: names })],
      };
    }
    const registered = await context.rules.alertingRules(signalOf(context));
    const byName = new Map(registered.map((rule) => [rule.name, rule.group]));
    const missing = names.filter((name) => !byName.has(name));
    const evidence = [
      settingEvidence('controlPlaneEvaluatorEnabled', false),
      {
        kind: 'series' as const,
        query: RULES_QUERY,
        series: registered.length,
        detail: {
          found: Object.fromEntries(names.filter((n) => byName.has(n)).map((n) => [n, byName.get(n)])),
          missing,
        },
      },
    ];
    if (missing.length > 0) {
      return {
        status: 'fail',
        reason: `${missing.length} of the ${names.length} alert rules are not registered in AMP and the control plane's evaluator is off: ${listText(missing)}`,
        evidence,
        fix: 'Upload the rule file: aws amp create-rule-groups-namespace --workspace-id <ws> --name vllm --data fileb://infra/prometheus/vllm-alerts.rules.yaml (vllm-pilot alerts rules), or deploy with the alert-evaluator enabled',
      };
    }
    return {
      status: 'pass',
      reason: `all ${names.length} alert rules are registered in AMP (${listText(names)})`,
      evidence,
    };
  },
};
