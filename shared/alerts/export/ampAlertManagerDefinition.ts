import {
  ALERT_ATTRIBUTE_MISSING,
  ALERT_MESSAGE_ATTRIBUTES,
  ALERT_MESSAGE_VERSION,
  ALERT_SUBJECT_MAX_LENGTH,
} from '../message.js';
import { AlertExportInvalidError } from '../errors.js';
import { formatDurationSeconds } from '../format.js';
import {
  ALERT_INHIBITIONS,
  ALERT_RULES,
  type AlertInhibition,
  DEFAULT_REPEAT_INTERVAL_SECONDS,
} from '../rules/index.js';
import { toYaml } from './ruleGroups.js';
import { REGION } from '../../config/index.js';

export interface AmpAlertManagerDefinitionOptions {
  /** The Standard (not FIFO) SNS topic AMP publishes to, e.g. `arn:aws:sns:us-east-1:123456789012:vllm-eks-pilot-alerts`. */
  topicArn: string;
  /** The topic's region (`sigv4.region`, required by AMP). */
  region: string;
  /** Alertmanager's `repeat_interval` (default 4 h; AMP caps it at 5 days). */
  repeatIntervalSeconds?: number;
}

/** AMP refuses a `repeat_interval` above 5 days (AMP quotas). */
const MAX_REPEAT_INTERVAL_SECONDS = 5 * 86_400;
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:([a-z0-9-]+):\d{12}:([A-Za-z0-9_-]{1,256})$/;

/**
 * The labels the message's `labels` may hold: every rule's identifying labels plus target, cluster and namespace, as
 * the Lambda engine's (`rules/evaluate.ts`). An AMP alert also carries `alertname` and `severity` (fields of the
 * message already) and, in a shared workspace, the target's `clusterLabel` under its own name: those stay out.
 */
export const MESSAGE_LABELS: readonly string[] = [
  ...new Set([...ALERT_RULES.flatMap((rule) => rule.identifyingLabels), 'target', 'cluster', 'namespace']),
].sort();

/**
 * Characters Go's `%q` would write as an escape JSON does not have (`\a`, `\v`, `\x01`, `\U000e0001`): control
 * characters other than \b \t \n \f \r, DEL, and runes above U+FFFF that are not printable. They become `?`.
 */
const NOT_JSON_SAFE = String.raw`[\x00-\x07\x0B\x0E-\x1F\x7F]|[^\x{0}-\x{FFFF}\pL\pM\pN\pP\pS]`;
/** A JSON number as Prometheus prints `$value` (Go's `%v`: `0.973`, `1e+06`, `-0`); not NaN, +Inf or -Inf. */
const JSON_NUMBER = String.raw`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`;
/** A Go template string literal of `text` (only `\` and `"` need escaping in these patterns). */
const goString = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** A JSON string of a template value. */
const jsonString = (expr: string) => `{{ template "vllm.json.string" (${expr}) }}`;
/** A JSON number of an annotation, or `null` when it is none (NaN, ±Inf, missing): the message stays valid JSON. */
const jsonNumber = (annotation: string) => `{{ template "vllm.json.number" (index .Annotations "${annotation}") }}`;
const ISO_TIME = '"2006-01-02T15:04:05.000Z07:00"';

/**
 * The helpers, then the SNS subject and message body AMP's alert manager sends. The subject is the Lambda engine's
 * (`alertSubject` in `notify/SnsAlertPublisher.ts`: `[FIRING] VLLMKVCacheFull prod-ministral`, printable ASCII, cut
 * to 100 characters with `...`). The body is one JSON object per alert (the route groups by every label, so a
 * notification holds one alert), the product's message v1 (`message.ts`), so one subscriber reads both engines.
 * Alertmanager cannot tell a first notification from a repeat: `reason` is `first` while firing.
 */
const TEMPLATE = [
  `{{ define "vllm.json.string" }}{{ printf "%q" (reReplaceAll ${goString(NOT_JSON_SAFE)} "?" .) }}{{ end }}`,
  `{{ define "vllm.json.number" }}{{ if match ${goString(JSON_NUMBER)} . }}{{ . }}{{ else }}null{{ end }}{{ end }}`,
  [
    '{{ define "vllm.sns.subject" }}',
    '{{ $s := printf "[%s] %s" (toUpper .Status) (index .CommonLabels "alertname") }}',
    '{{ with index .CommonLabels "target" }}{{ $s = printf "%s %s" $s . }}{{ end }}',
    '{{ $s = reReplaceAll "^ +| +$" "" (reReplaceAll " {2,}" " " (reReplaceAll "[^ -~]" "?" $s)) }}',
    `{{ reReplaceAll "^(.{${ALERT_SUBJECT_MAX_LENGTH - 3}}).{4,}$" "\${1}..." $s }}{{ end }}`,
  ].join(''),
  [
    '{{ define "sns.default.message" }}{{ with index .Alerts 0 }}{',
    `"version": ${ALERT_MESSAGE_VERSION}, `,
    `"alertname": ${jsonString('index .Labels "alertname"')}, `,
    `"severity": ${jsonString('index .Labels "severity"')}, `,
    `"status": ${jsonString('.Status')}, `,
    '"reason": {{ if eq .Status "resolved" }}"resolved"{{ else }}"first"{{ end }}, ',
    `"target": ${jsonString('index .Labels "target"')}, `,
    '"labels": {{ "{" }}{{ $first := true }}{{ range .Labels.SortedPairs }}',
    `{{ if eq .Name ${MESSAGE_LABELS.map((name) => `"${name}"`).join(' ')} }}`,
    '{{ if $first }}{{ $first = false }}{{ else }}, {{ end }}',
    `${jsonString('.Name')}: ${jsonString('.Value')}{{ end }}{{ end }}{{ "}" }}, `,
    `"fingerprint": ${jsonString('.Fingerprint')}, `,
    `"value": ${jsonNumber('value')}, `,
    `"threshold": ${jsonNumber('threshold')}, `,
    `"unit": ${jsonString('index .Annotations "unit"')}, `,
    `"startsAt": ${jsonString(`.StartsAt.UTC.Format ${ISO_TIME}`)}, `,
    `"endsAt": {{ if eq .Status "resolved" }}${jsonString(`.EndsAt.UTC.Format ${ISO_TIME}`)}{{ else }}null{{ end }}, `,
    `"summary": ${jsonString('index .Annotations "summary"')}, `,
    `"description": ${jsonString('index .Annotations "description"')}, `,
    `"runbook": ${jsonString('index .Annotations "runbook"')}, `,
    `"runbookUrl": {{ with index .Annotations "runbook_url" }}${jsonString('.')}{{ else }}null{{ end }}, `,
    `"dashboardUrl": {{ with index .Annotations "dashboard_url" }}${jsonString('.')}{{ else }}null{{ end }}`,
    '}{{ end }}{{ end }}',
  ].join(''),
].join('\n');

/** One Alertmanager inhibit rule (matchers syntax, Alertmanager 0.22 and later). */
export interface AlertmanagerInhibitRule {
  source_matchers: string[];
  target_matchers: string[];
  equal: string[];
}

/**
 * The inhibitions (`rules/inhibitions.ts`) as Alertmanager `inhibit_rules`: the same table the Lambda engine's
 * decision stage applies, so both engines hold back the same notifications.
 */
export function alertmanagerInhibitRules(
  inhibitions: readonly AlertInhibition[] = ALERT_INHIBITIONS,
): AlertmanagerInhibitRule[] {
  return inhibitions.map((inhibition) => ({
    source_matchers: [`alertname="${inhibition.source}"`],
    // Alert names are identifiers ([A-Za-z]+): nothing in them needs escaping inside the regex.
    target_matchers: [`alertname=~"${inhibition.targets.join('|')}"`],
    equal: [...inhibition.equal],
  }));
}

/**
 * The AMP alert manager definition (`aws amp create-alert-manager-definition --data fileb://am.yaml`): one SNS
 * receiver (`sns_configs` with `sigv4.region`), the Lambda engine's subject, the JSON message template,
 * MessageAttributes severity, status, alertname, target, cluster and namespace for subscription filter policies
 * ("none" when an alert lacks the label, in both engines: SNS refuses an empty value), and the inhibit rules. The
 * topic's access policy must let `aps.amazonaws.com` publish.
 */
export function ampAlertManagerDefinition(options: AmpAlertManagerDefinitionOptions): string {
  const arn = SNS_TOPIC_ARN.exec(options.topicArn);
  if (!arn)
    throw new AlertExportInvalidError(
      'topicArn',
      `${JSON.stringify(options.topicArn)} is not valid; accepted: an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>); AMP needs a Standard topic, not FIFO`,
    );
  if (arn[2]?.endsWith('.fifo') || options.topicArn.endsWith('.fifo'))
    throw new AlertExportInvalidError('topicArn', 'a FIFO topic is not accepted by AMP; use a Standard topic');
  if (!REGION.test(options.region))
    throw new AlertExportInvalidError(
      'region',
      `${JSON.stringify(options.region)} is not valid; accepted: an AWS region such as us-east-1`,
    );
  if (arn[1] !== options.region)
    throw new AlertExportInvalidError(
      'region',
      `${options.region} is not the topic's region (${arn[1] ?? ''}); accepted: the region in the topic ARN`,
    );
  const repeat = options.repeatIntervalSeconds ?? DEFAULT_REPEAT_INTERVAL_SECONDS;
  if (!Number.isInteger(repeat) || repeat < 60 || repeat > MAX_REPEAT_INTERVAL_SECONDS)
    throw new AlertExportInvalidError(
      'repeatIntervalSeconds',
      `${repeat} is not valid; accepted: whole seconds from 60 to ${MAX_REPEAT_INTERVAL_SECONDS} (AMP caps repeat_interval at 5 days)`,
    );
  const attributes = Object.fromEntries(
    ALERT_MESSAGE_ATTRIBUTES.map((name) => [
      name,
      name === 'status' ? '{{ .Status }}' : `{{ or (index .CommonLabels "${name}") "${ALERT_ATTRIBUTE_MISSING}" }}`,
    ]),
  );
  const alertmanagerConfig = {
    route: {
      receiver: 'sns',
      // Every label: one alert per notification, like the product's own messages.
      group_by: ['...'],
      group_wait: '30s',
      group_interval: '5m',
      repeat_interval: formatDurationSeconds(repeat),
    },
    inhibit_rules: alertmanagerInhibitRules(),
    receivers: [
      {
        name: 'sns',
        sns_configs: [
          {
            topic_arn: options.topicArn,
            sigv4: { region: options.region },
            send_resolved: true,
            subject: '{{ template "vllm.sns.subject" . }}',
            message: '{{ template "sns.default.message" . }}',
            attributes,
          },
        ],
      },
    ],
  };
  return toYaml({
    template_files: { default_template: TEMPLATE },
    alertmanager_config: toYaml(alertmanagerConfig),
  });
}
