import { CHECK_STATUSES, type CheckStatus, type PreflightReport } from './types.js';

/** What the preflight function publishes to its SNS topic when a check fails: one message per run. */
export interface PreflightNotification {
  /** SNS Subject: at most 100 printable ASCII characters, no line breaks (SNS Publish rules). */
  subject: string;
  /** JSON (`PreflightSummary`). */
  message: string;
  /** SNS message attributes (String), for subscription filter policies. */
  attributes: { kind: 'preflight'; status: CheckStatus; target: string; cluster: string };
}

/** One check that did not pass, as the summary lists it. */
export interface PreflightProblem {
  item: number;
  id: string;
  title: string;
  status: CheckStatus;
  reason: string;
  fix?: string;
}

/** The message body: every target's outcome, the checks that warned or failed, and the human table. */
export interface PreflightSummary {
  kind: 'preflight';
  version: 1;
  status: CheckStatus;
  checkedAt: string;
  targets: Array<{
    name: string;
    cluster: string;
    namespace: string;
    deployment: string;
    status: CheckStatus;
    counts: Record<CheckStatus, number>;
    problems: PreflightProblem[];
  }>;
  /** The formatted reports (formatPreflightReport), as `vllm-pilot preflight` prints them. */
  text: string;
}

const SUBJECT_MAX = 100;
/** SNS accepts 256 KiB; leave room for the attributes and the JSON around the text. */
const MESSAGE_MAX_BYTES = 240 * 1024;

/** The worst status among `statuses`: fail over warn over pass. */
export function worstStatus(statuses: readonly CheckStatus[]): CheckStatus {
  if (statuses.includes(CHECK_STATUSES.fail)) return CHECK_STATUSES.fail;
  if (statuses.includes(CHECK_STATUSES.warn)) return CHECK_STATUSES.warn;
  return CHECK_STATUSES.pass;
}

/** Builds the one SNS message of a run from its reports (`format` renders one report as text). */
export function preflightNotification(
  reports: readonly PreflightReport[],
  format: (report: PreflightReport) => string,
  checkedAt: string,
): PreflightNotification {
  const status = worstStatus(reports.map((r) => r.status));
  const failing = reports.filter((r) => r.status === CHECK_STATUSES.fail);
  const summary: PreflightSummary = {
    kind: 'preflight',
    version: 1,
    status,
    checkedAt,
    targets: reports.map((report) => ({
      name: report.target.name,
      cluster: report.target.cluster,
      namespace: report.target.namespace,
      deployment: report.target.deployment,
      status: report.status,
      counts: report.counts,
      problems: report.results
        .filter((r) => r.status !== CHECK_STATUSES.pass)
        .map((r) => ({
          item: r.item,
          id: r.id,
          title: r.title,
          status: r.status,
          reason: r.reason,
          ...(r.fix === undefined ? {} : { fix: r.fix }),
        })),
    })),
    text: reports.map(format).join('\n\n'),
  };
  let message = JSON.stringify(summary);
  if (Buffer.byteLength(message, 'utf8') > MESSAGE_MAX_BYTES)
    // The problems carry what a reader needs; the table repeats them.
    message = JSON.stringify({ ...summary, text: '(left out: the message would exceed the SNS size limit)' });
  const unique = (values: string[]) => [...new Set(values)].join(',');
  const named = failing.length > 0 ? failing : reports;
  return {
    subject: subjectFor(reports, failing),
    message,
    attributes: {
      kind: 'preflight',
      status,
      target: unique(named.map((r) => r.target.name)),
      cluster: unique(named.map((r) => r.target.cluster)),
    },
  };
}

/** `Preflight FAIL: prod-ministral (2 fail, 1 warn)` or `Preflight FAIL: 2 of 3 targets (prod, staging)`. */
function subjectFor(reports: readonly PreflightReport[], failing: readonly PreflightReport[]): string {
  const status = worstStatus(reports.map((r) => r.status)).toUpperCase();
  const only = failing.length === 1 ? failing[0] : undefined;
  const text =
    only !== undefined
      ? `Preflight ${status}: ${only.target.name} (${only.counts.fail} fail, ${only.counts.warn} warn)`
      : `Preflight ${status}: ${failing.length} of ${reports.length} targets (${failing.map((r) => r.target.name).join(', ')})`;
  // SNS refuses line breaks and non-ASCII in a subject.
  const ascii = text.replace(/[^\x20-\x7e]/g, '?');
  return ascii.length <= SUBJECT_MAX ? ascii : `${ascii.slice(0, SUBJECT_MAX - 3)}...`;
}
