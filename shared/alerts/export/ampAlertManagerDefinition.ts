import { ALERT_MESSAGE_ATTRIBUTES, ALERT_MESSAGE_VERSION } from '../message.js';
import { AlertExportInvalidError } from '../errors.js';
import { formatDurationSeconds } from '../format.js';
import { DEFAULT_REPEAT_INTERVAL_SECONDS } from '../rules/index.js';
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

/** A JSON string of a template value: Go's `%q` escapes `"`, `\` and control characters the way JSON reads them. */
const quote = (expr: string) => `{{ printf "%q" (${expr}) }}`;

/**
 * The SNS message body AMP's alert manager sends: one JSON object per alert (the route groups by every label, so a
 * notification holds one alert), shaped like the product's message v1 (`message.ts`) so one subscriber reads both.
 * Alertmanager cannot tell a first notification from a repeat: `reason` is `first` while firing.
 */
const MESSAGE_TEMPLATE = [
  '{{ define "sns.default.message" }}{{ with index .Alerts 0 }}{',
  `"version": ${ALERT_MESSAGE_VERSION}, `,
  `"alertname": ${quote('index .Labels "alertname"')}, `,
  `"severity": ${quote('index .Labels "severity"')}, `,
  `"status": ${quote('.Status')}, `,
  '"reason": {{ if eq .Status "resolved" }}"resolved"{{ else }}"first"{{ end }}, ',
  `"target": ${quote('index .Labels "target"')}, `,
  '"labels": {{ "{" }}{{ range $i, $p := .Labels.SortedPairs }}{{ if $i }}, {{ end }}',
  '{{ printf "%q" $p.Name }}: {{ printf "%q" $p.Value }}{{ end }}{{ "}" }}, ',
  `"fingerprint": ${quote('.Fingerprint')}, `,
  '"value": {{ or (index .Annotations "value") "0" }}, ',
  '"threshold": {{ or (index .Annotations "threshold") "0" }}, ',
  `"unit": ${quote('index .Annotations "unit"')}, `,
  `"startsAt": ${quote('.StartsAt.UTC.Format "2006-01-02T15:04:05.000Z07:00"')}, `,
  `"endsAt": {{ if eq .Status "resolved" }}${quote('.EndsAt.UTC.Format "2006-01-02T15:04:05.000Z07:00"')}{{ else }}null{{ end }}, `,
  `"summary": ${quote('index .Annotations "summary"')}, `,
  `"description": ${quote('index .Annotations "description"')}, `,
  `"runbook": ${quote('index .Annotations "runbook"')}, `,
  '"runbookUrl": {{ with index .Annotations "runbook_url" }}{{ printf "%q" . }}{{ else }}null{{ end }}, ',
  '"dashboardUrl": {{ with index .Annotations "dashboard_url" }}{{ printf "%q" . }}{{ else }}null{{ end }}',
  '}{{ end }}{{ end }}',
].join('');

/**
 * The AMP alert manager definition (`aws amp create-alert-manager-definition --data fileb://am.yaml`): one SNS
 * receiver (`sns_configs` with `sigv4.region`), the JSON message template, and MessageAttributes severity, status,
 * alertname, target, cluster and namespace for subscription filter policies ("none" when an alert lacks the label:
 * SNS refuses an empty attribute value). The topic's access policy must let `aps.amazonaws.com` publish.
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
      name === 'status' ? '{{ .Status }}' : `{{ or (index .CommonLabels "${name}") "none" }}`,
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
    receivers: [
      {
        name: 'sns',
        sns_configs: [
          {
            topic_arn: options.topicArn,
            sigv4: { region: options.region },
            send_resolved: true,
            subject: '[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}',
            message: '{{ template "sns.default.message" . }}',
            attributes,
          },
        ],
      },
    ],
  };
  return toYaml({
    template_files: { default_template: MESSAGE_TEMPLATE },
    alertmanager_config: toYaml(alertmanagerConfig),
  });
}
