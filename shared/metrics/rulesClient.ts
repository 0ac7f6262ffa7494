/**
 * The AlertRulesSource adapter: which alerting rules AMP (or any Prometheus) has loaded, read from the Prometheus
 * rules API (`GET <workspace>/api/v1/rules?type=alert`, IAM action `aps:ListRules`). It shares the signed transport
 * of HttpMetricsSource: SigV4 service `aps`, timeouts, retries and the same named errors.
 */
import type { AlertRulesSource, RegisteredAlertRule } from './types.js';
import { PrometheusApiTransport, type HttpMetricsSourceOptions } from './ampClient.js';
import { MetricsMalformedResponseError } from './errors.js';

/** The rules API path under the workspace URL, and the filter that keeps only alerting rules. */
export const RULES_API = { path: 'api/v1/rules', params: { type: 'alert' } } as const;
const LABEL = `GET ${RULES_API.path}?type=${RULES_API.params.type}`;

/** Options as for HttpMetricsSource: the workspace URL, region, credentials, timeouts and retries. */
export type HttpAlertRulesSourceOptions = HttpMetricsSourceOptions;

/** Lists the alerting rules of an AMP workspace or a Prometheus server. */
export class HttpAlertRulesSource implements AlertRulesSource {
  readonly #transport: PrometheusApiTransport;

  constructor(options: HttpAlertRulesSourceOptions) {
    this.#transport = new PrometheusApiTransport(options);
  }

  /** Every alerting rule of every rule group, with its group and state. */
  async alertingRules(options: { signal?: AbortSignal } = {}): Promise<RegisteredAlertRule[]> {
    const data = await this.#transport.send({
      method: 'GET',
      path: RULES_API.path,
      params: { ...RULES_API.params },
      label: LABEL,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return parseRuleGroups(data);
  }
}

/** Reads `data.groups[].rules[]` (https://prometheus.io/docs/prometheus/latest/querying/api/#rules). */
function parseRuleGroups(data: Record<string, unknown>): RegisteredAlertRule[] {
  const groups = data.groups;
  if (!Array.isArray(groups)) throw malformed('data.groups is not an array');
  const rules: RegisteredAlertRule[] = [];
  for (const [i, group] of groups.entries()) {
    if (!isRecord(group) || typeof group.name !== 'string') throw malformed(`data.groups[${i}] has no name`);
    if (!Array.isArray(group.rules)) throw malformed(`data.groups[${i}].rules is not an array`);
    for (const [j, rule] of group.rules.entries()) {
      if (!isRecord(rule) || typeof rule.name !== 'string')
        throw malformed(`data.groups[${i}].rules[${j}] has no name`);
      // `type=alert` filters on the server, but an older server ignores the parameter: recording rules are skipped.
      if (rule.type !== undefined && rule.type !== 'alerting') continue;
      rules.push({
        group: group.name,
        name: rule.name,
        ...(typeof rule.state === 'string' ? { state: rule.state } : {}),
      });
    }
  }
  return rules;
}

function malformed(reason: string): MetricsMalformedResponseError {
  return new MetricsMalformedResponseError(reason, undefined, { query: LABEL });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
