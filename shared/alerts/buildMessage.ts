import type { NotifyDecision } from './decide.js';
import { ALERT_MESSAGE_VERSION, alertMessageSchema, type AlertMessage } from './message.js';
import { AlertMessageInvalidError } from './pipelineErrors.js';
import { formatPath } from '../config/index.js';

/**
 * Builds the v1 SNS message of a notify decision and validates it with `alertMessageSchema`, so nothing a subscriber
 * would refuse is ever published. Throws AlertMessageInvalidError naming each bad field.
 */
export function buildAlertMessage(decision: NotifyDecision): AlertMessage {
  const { state } = decision;
  const timeIssues: string[] = [];
  const iso = (field: string, ms: number): string => {
    const date = new Date(ms);
    if (!Number.isNaN(date.getTime())) return date.toISOString();
    timeIssues.push(`message.${field}: ${ms} is not a time; accepted: epoch milliseconds within Date's range`);
    return '';
  };
  const candidate: AlertMessage = {
    version: ALERT_MESSAGE_VERSION,
    alertname: state.alertname,
    severity: state.severity,
    status: state.status,
    reason: decision.reason,
    target: state.target,
    labels: { ...state.labels },
    fingerprint: state.fingerprint,
    value: state.value,
    threshold: state.threshold,
    unit: state.unit,
    startsAt: iso('startsAt', state.startsAtMs),
    endsAt: state.endsAtMs === null ? null : iso('endsAt', state.endsAtMs),
    summary: state.summary,
    description: state.description,
    runbook: state.runbook,
    runbookUrl: state.runbookUrl,
    dashboardUrl: state.dashboardUrl,
  };
  const parsed = alertMessageSchema.safeParse(candidate);
  const issues = [
    ...(parsed.success ? [] : parsed.error.issues.map((i) => `${formatPath('message', i.path)}: ${i.message}`)),
    ...timeIssues,
  ];
  if ((candidate.status === 'resolved') !== (candidate.endsAt !== null))
    issues.push(
      `message.endsAt: is ${String(candidate.endsAt)} for status ${candidate.status}; accepted: null while firing, a time once resolved`,
    );
  if (!parsed.success || issues.length > 0) throw new AlertMessageInvalidError(state.fingerprint, issues);
  return parsed.data;
}
