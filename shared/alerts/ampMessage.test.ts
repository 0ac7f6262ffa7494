import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { type AlertMessage, alertMessageSchema, type AlertName, goFormatFloat } from './index.js';
import { buildAlertMessage } from './buildMessage.js';
import { decide, type NotifyDecision } from './decide.js';
import { alertmanagerFingerprint } from './testing/alertmanagerFingerprint.js';
import { alertRuleGroups, ampAlertManagerDefinition } from './export/index.js';
import { alertMessageAttributes, alertSubject } from './notify/index.js';
import { evaluateTarget, parseAlertSettings, ruleByName } from './rules/index.js';
import { fixtureRecord } from './testing/fixtures.js';
import type { AlertStateRecord } from './alertState.js';
import type { Target } from '../config/index.js';
import type { MetricsSource } from '../metrics/index.js';

// Both engines' SNS message for the same alert. The Lambda engine's comes from its own pipeline (evaluate, decide,
// build); AMP's is the alert manager definition's template rendered by Debian's amtool 0.25 (`amtool template
// render`, Alertmanager's own template engine and functions) over the alert the exported per-target rule hands
// Alertmanager: the series labels, the rule's labels and `alertname`, the rule's annotations as Prometheus expands
// them (the evaluator's own texts: `promtool test rules` proves the expansion equal, infra/prometheus), and the
// fingerprint Alertmanager computes from those labels.

const execFileAsync = promisify(execFile);
const TOPIC = 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-alerts';
const SEPARATOR = '\n<<<>>>\n';
/** 2026-11-29T22:05:05.052Z: the evaluation that found the alert firing (Prometheus: the rule's FiredAt). */
const FIRED_AT_MS = Date.parse('2026-11-29T22:05:05.052Z');
const LATER_MS = FIRED_AT_MS + 5 * 3_600_000;

const SETTINGS = parseAlertSettings({
  dashboardUrl: 'https://grafana.example.com/d/vllm',
  runbookBaseUrl: 'https://wiki.example.com/vllm',
});
const TARGET: Target = {
  name: 'prod-ministral',
  cluster: 'prod',
  namespace: 'llm',
  deployment: 'ministral',
  model: 'mistralai/Ministral-8B-Instruct-2410',
};
/** A target in a workspace shared by clusters whose series name the cluster in a label of their own. */
const SHARED_TARGET: Target = { ...TARGET, name: 'eu-ministral', cluster: 'eu-prod', clusterLabel: 'eks_cluster' };

let amtool: string;
let scratch: string;
let templateFile: string;
let attributeTemplates: Record<string, string>;
let subjectTemplate: string;
let messageTemplate: string;

beforeAll(async () => {
  amtool = await findAmtool();
  scratch = await mkdtemp(join(tmpdir(), 'alerts-amp-message-'));
  const definition = parseYaml(ampAlertManagerDefinition({ topicArn: TOPIC, region: 'us-east-2' })) as {
    template_files: Record<string, string>;
    alertmanager_config: string;
  };
  templateFile = join(scratch, 'default_template');
  await writeFile(templateFile, definition.template_files.default_template ?? '');
  const config = parseYaml(definition.alertmanager_config) as {
    receivers: Array<{ sns_configs: Array<{ subject: string; message: string; attributes: Record<string, string> }> }>;
  };
  const sns = config.receivers[0]?.sns_configs[0];
  if (sns === undefined) throw new Error('the definition has no SNS receiver');
  ({ subject: subjectTemplate, message: messageTemplate, attributes: attributeTemplates } = sns);
  // What AMP stores: the configuration, its template file beside it (as the twin writes it for Alertmanager).
  await writeFile(
    join(scratch, 'alertmanager.yml'),
    `${definition.alertmanager_config}templates:\n  - ${JSON.stringify(templateFile)}\n`,
  );
});

afterAll(async () => {
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

async function findAmtool(): Promise<string> {
  const fromEnv = process.env.ALERTMANAGER_BIN?.trim();
  const candidates = [...(fromEnv ? [join(fromEnv, '..', 'amtool')] : []), 'amtool'];
  for (const candidate of candidates) {
    try {
      await execFileAsync(candidate, ['--version']);
      return candidate;
    } catch {
      // next candidate
    }
  }
  throw new Error('amtool not found: install it with `sudo apt-get install -y prometheus-alertmanager`');
}

interface AmpAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAtMs: number;
  endsAtMs: number | null;
}

/** Alertmanager's template data for a notification of one alert (the route groups by every label). */
function templateData(alert: AmpAlert) {
  return {
    receiver: 'sns',
    status: alert.status,
    alerts: [
      {
        status: alert.status,
        labels: alert.labels,
        annotations: alert.annotations,
        startsAt: new Date(alert.startsAtMs).toISOString(),
        endsAt: alert.endsAtMs === null ? '0001-01-01T00:00:00Z' : new Date(alert.endsAtMs).toISOString(),
        generatorURL: '',
        fingerprint: alertmanagerFingerprint(alert.labels),
      },
    ],
    groupLabels: alert.labels,
    commonLabels: alert.labels,
    commonAnnotations: alert.annotations,
    externalURL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1/alertmanager',
  };
}

/** The subject, the body and each attribute AMP's alert manager sends for `alert`, rendered by amtool. */
async function renderAmp(alert: AmpAlert) {
  const dataFile = join(scratch, 'data.json');
  await writeFile(dataFile, JSON.stringify(templateData(alert)));
  const names = Object.keys(attributeTemplates);
  const text = [subjectTemplate, messageTemplate, ...names.map((name) => attributeTemplates[name])].join(SEPARATOR);
  const { stdout } = await execFileAsync(amtool, [
    'template',
    'render',
    `--template.glob=${templateFile}`,
    `--template.text=${text}`,
    `--template.data=${dataFile}`,
  ]);
  const [subject, body, ...values] = stdout.replace(/\n$/, '').split(SEPARATOR);
  return {
    subject,
    body: body ?? '',
    attributes: Object.fromEntries(names.map((name, i) => [name, values[i]])),
  };
}

/** The Lambda engine's view of the same alert as its message, subject and attributes (SnsAlertPublisher). */
function lambdaSide(message: AlertMessage) {
  return {
    subject: alertSubject(message),
    attributes: Object.fromEntries(
      Object.entries(alertMessageAttributes(message)).map(([name, value]) => [name, value.StringValue]),
    ),
  };
}

interface Case {
  case: string;
  target: Target;
  alertname: AlertName;
  /** The series of the rule's value query: its `by` labels. */
  series: Record<string, string>;
  value: number;
  /** The Lambda engine's notification: first, repeat (the last one 4 h ago) or resolved. */
  notification: 'first' | 'repeat' | 'resolved';
  /** True when AMP's fingerprint is Alertmanager's hash of the message's labels, alertname and severity. */
  derivable: boolean;
}

/** Both engines' notifications of one alert. */
async function bothEngines(c: Case) {
  // The Lambda engine: evaluate (every rule's query answers the series), decide against the stored record, build.
  const source: MetricsSource = {
    instant: () => Promise.resolve([{ labels: c.series, value: c.value, timestampMs: FIRED_AT_MS }]),
    range: () => Promise.reject(new Error('not used')),
  };
  const evaluation = await evaluateTarget(c.target, SETTINGS, { source }, FIRED_AT_MS);
  const instance = evaluation.firing.find((i) => i.alertname === c.alertname);
  if (instance === undefined) throw new Error(`${c.alertname} did not fire`);
  const sent = { status: 'firing' as const, startsAtMs: FIRED_AT_MS, atMs: FIRED_AT_MS, reason: 'first' as const };
  const records: AlertStateRecord[] =
    c.notification === 'first' ? [] : [fixtureRecord(instance, FIRED_AT_MS, { lastNotification: sent })];
  const decisions = decide({
    records,
    evaluation:
      c.notification === 'resolved'
        ? { ...evaluation, timeMs: LATER_MS, firing: [] }
        : { ...evaluation, timeMs: c.notification === 'first' ? FIRED_AT_MS : LATER_MS },
    repeatIntervalSeconds: SETTINGS.repeatIntervalSeconds,
    nowMs: c.notification === 'first' ? FIRED_AT_MS : LATER_MS,
  });
  const decision = decisions.find(
    (d): d is NotifyDecision => d.action === 'notify' && d.fingerprint === instance.fingerprint,
  );
  if (decision === undefined) throw new Error(`no ${c.notification} notification for ${c.alertname}`);
  const lambda = buildAlertMessage(decision);

  // AMP: the alert the exported per-target rule gives Alertmanager.
  const rule = alertRuleGroups({ targets: [{ target: c.target, settings: SETTINGS }] })
    .flatMap((group) => group.rules)
    .find((r) => r.alert === c.alertname);
  if (rule === undefined) throw new Error(`no exported ${c.alertname} rule`);
  const context = { labels: c.series, value: c.value, settings: SETTINGS.rules[c.alertname] };
  const { summary: _s, description: _d, ...literal } = rule.annotations;
  const amp = await renderAmp({
    status: c.notification === 'resolved' ? 'resolved' : 'firing',
    // Prometheus: the series labels, then the rule's labels over them, then alertname.
    labels: { ...c.series, ...rule.labels, alertname: rule.alert },
    annotations: {
      ...literal,
      summary: ruleByName(c.alertname).summary(context),
      description: ruleByName(c.alertname).description(context),
      value: goFormatFloat(c.value),
    },
    startsAtMs: FIRED_AT_MS,
    endsAtMs: c.notification === 'resolved' ? LATER_MS : null,
  });
  return { lambda, amp };
}

const KV_CACHE_FULL_FIRST: Case = {
  case: "a KV-cache alert's first notification",
  target: TARGET,
  alertname: 'VLLMKVCacheFull',
  series: { namespace: 'llm', pod: 'ministral-7d9c8b6f5d-x2k4q', model_name: TARGET.model },
  value: 0.973,
  notification: 'first',
  derivable: true,
};

describe('AMP alert manager definition (amtool 0.25)', () => {
  it('passes amtool check-config', async () => {
    // Act
    const { stdout } = await execFileAsync(amtool, ['check-config', join(scratch, 'alertmanager.yml')]);

    // Assess
    expect(stdout).toContain('SUCCESS');
    expect(stdout).toContain(' - 1 templates');
  });

  it.each<Case>([
    KV_CACHE_FULL_FIRST,
    { ...KV_CACHE_FULL_FIRST, case: 'its repeat (AMP cannot tell one: reason first)', notification: 'repeat' },
    {
      case: 'a GPU alert resolved, in a workspace shared by clusters (their label stays out of `labels`)',
      target: SHARED_TARGET,
      alertname: 'VLLMGPUMemoryCritical',
      series: {
        UUID: 'GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21',
        gpu: '0',
        Hostname: 'ip-192-168-131-77.us-east-2.compute.internal',
        modelName: 'NVIDIA L40S',
        namespace: 'llm',
        pod: 'ministral-7d9c8b6f5d-x2k4q',
        eks_cluster: 'eu-prod',
      },
      value: 44_000 / 46_068,
      notification: 'resolved',
      derivable: false,
    },
  ])('sends the Lambda engine’s message for $case, but for the documented differences', async (c) => {
    // Act
    const { lambda, amp } = await bothEngines(c);

    // Assess: AMP's body is a v1 message equal to the Lambda engine's in every field but `fingerprint` (and
    // `reason` for a repeat); the subject and every attribute are the same.
    const message = alertMessageSchema.parse(JSON.parse(amp.body));
    const reason = c.notification === 'repeat' ? 'first' : lambda.reason;
    expect({ ...message, fingerprint: lambda.fingerprint }).toEqual({ ...lambda, reason });
    expect(message.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(lambda.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    const fromMessage = alertmanagerFingerprint({
      ...lambda.labels,
      alertname: lambda.alertname,
      severity: lambda.severity,
    });
    expect(message.fingerprint === fromMessage).toBe(c.derivable);
    expect({ subject: amp.subject, attributes: amp.attributes }).toEqual(lambdaSide(lambda));
  });

  it.each([
    { case: 'a long target name, cut to 100 characters', target: 't'.repeat(120) },
    { case: 'characters SNS refuses', target: 'prod\tmünchen' },
    { case: 'no target (a generic rule)', target: undefined },
  ])('writes the Lambda engine’s subject for $case', async ({ target }) => {
    // Prepare
    const labels = { alertname: 'VLLMKVCacheFull', severity: 'critical', ...(target ? { target } : {}) };

    // Act
    const { subject } = await renderAmp({
      status: 'resolved',
      labels,
      annotations: {},
      startsAtMs: FIRED_AT_MS,
      endsAtMs: LATER_MS,
    });

    // Assess
    const { lambda } = await bothEngines(KV_CACHE_FULL_FIRST);
    expect(subject).toBe(alertSubject({ ...lambda, status: 'resolved', target: target ?? '' }));
    expect(subject).toMatch(/^[\x20-\x7e]{1,100}$/);
  });

  it('sends "none" for a missing label, as the Lambda engine does', async () => {
    // Prepare: an alert without namespace and cluster (a generic rule's GPU alert on a GPU no Pod uses).
    const labels = { alertname: 'VLLMGPUMemoryCritical', severity: 'critical', UUID: 'GPU-1', target: 't' };

    // Act
    const { attributes } = await renderAmp({
      status: 'firing',
      labels,
      annotations: {},
      startsAtMs: FIRED_AT_MS,
      endsAtMs: null,
    });

    // Assess
    const { lambda } = await bothEngines(KV_CACHE_FULL_FIRST);
    const withoutThem = lambdaSide({ ...lambda, target: 't', labels: { UUID: 'GPU-1', target: 't' } });
    expect(attributes).toMatchObject({ target: 't', cluster: 'none', namespace: 'none' });
    expect({ cluster: attributes.cluster, namespace: attributes.namespace }).toEqual({
      cluster: withoutThem.attributes.cluster,
      namespace: withoutThem.attributes.namespace,
    });
  });

  it.each([
    { case: 'NaN', value: 'NaN' },
    { case: '+Inf', value: '+Inf' },
    { case: '-Inf', value: '-Inf' },
    { case: 'no value annotation', value: undefined },
  ])('writes "value": null for $case: valid JSON that the v1 schema refuses', async ({ value }) => {
    // Act
    const { body } = await renderAmp({
      status: 'firing',
      labels: { alertname: 'VLLMKVCacheFull', severity: 'critical', target: 't' },
      annotations: {
        ...(value === undefined ? {} : { value }),
        threshold: '0.95',
        unit: 'ratio',
        // Characters Go's %q would escape in ways JSON has not (\a, \v, \x01, \U000e0001).
        summary: 'bell \u0007 vtab \u000b soh \u0001 tag \u{e0001} tab \t é 😀',
        description: 'd',
        runbook: 'r',
      },
      startsAtMs: FIRED_AT_MS,
      endsAtMs: null,
    });

    // Assess
    const parsed = JSON.parse(body) as Record<string, unknown>;
    expect(parsed.value).toBeNull();
    expect(parsed.threshold).toBe(0.95);
    expect(parsed.summary).toBe('bell ? vtab ? soh ? tag ? tab \t é 😀');
    const checked = alertMessageSchema.safeParse(parsed);
    expect(checked.success ? [] : checked.error.issues.map((i) => i.path.join('.'))).toEqual(['value']);
  });

  it('writes Prometheus’s exponent form as a JSON number', async () => {
    // Act
    const { body } = await renderAmp({
      status: 'firing',
      labels: { alertname: 'VLLMHighQueueDepth', severity: 'warning' },
      annotations: { value: '1.5e+06', threshold: '50' },
      startsAtMs: FIRED_AT_MS,
      endsAtMs: null,
    });

    // Assess
    expect(JSON.parse(body)).toMatchObject({ value: 1_500_000, threshold: 50 });
  });
});
