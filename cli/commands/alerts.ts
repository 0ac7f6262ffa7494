import { writeFile } from 'node:fs/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { AlertExportInvalidError } from '../../shared/alerts/index.js';
import {
  type AlertTarget,
  parseAlertSettings,
  parseAlertTargets,
  parseDurationSeconds,
} from '../../shared/alerts/rules/index.js';
import {
  ampAlertManagerDefinition,
  ampRuleGroupsNamespaceData,
  prometheusRuleManifest,
  promtoolTestFile,
  toYaml,
} from '../../shared/alerts/export/index.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { twinHistoryStore, twinMetricsSource, twinTarget } from '../../sim/harness/twinTarget.js';
import {
  ALERTS_ACCOUNT_FLAGS,
  dryRunAlerts,
  dryRunAlertsOnAccount,
  type DryRunTarget,
  formatDryRun,
} from '../account/alerts.js';
import { type AccountFlags, addAccountFlags, refuseMixedModes } from '../account/options.js';
import { CliOptionRequiredError } from '../errors.js';
import { harness } from '../harness.js';
import { registerAlertSilenceCommands } from './alertSilences.js';
import { printJson } from '../options.js';
import { readStructuredFile } from '../readFile.js';

export { renderAlertTable } from '../../shared/alerts/export/index.js';

/** What `alerts rules --format` writes. */
export const ALERT_RULE_FORMATS = {
  'prometheus-rule': 'a PrometheusRule for the Prometheus Operator (kube-prometheus-stack): kubectl apply -f',
  amp: 'AMP rule groups namespace data (a Prometheus rules file): aws amp create-rule-groups-namespace --data fileb://FILE',
  'amp-alertmanager': 'the AMP alert manager definition with the SNS receiver (needs --topic-arn and --region)',
  'promtool-test': 'the promtool unit tests of the generic rules (promtool test rules FILE, next to the amp file)',
} as const;
export type AlertRuleFormat = keyof typeof ALERT_RULE_FORMATS;

export interface AlertRulesOptions {
  format: AlertRuleFormat;
  /** Targets with their alert settings (`parseAlertTargets`); omitted: the generic rules. */
  targets?: readonly AlertTarget[];
  /** prometheus-rule: metadata.name, metadata.namespace, metadata.labels. */
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  /** amp: the rule groups namespace the file is for. */
  ampNamespace?: string;
  /** amp-alertmanager */
  topicArn?: string;
  region?: string;
  repeatIntervalSeconds?: number;
}

/** The file `alerts rules` writes for `options` (YAML). Throws a named error with a one-line message on bad input. */
export function renderAlertRules(options: AlertRulesOptions): string {
  const { format } = options;
  const refuse = (field: string, problem: string) => new AlertExportInvalidError(field, problem);
  if (options.targets !== undefined && (format === 'amp-alertmanager' || format === 'promtool-test'))
    throw refuse('--targets', `applies to --format prometheus-rule and amp, not ${format}`);
  if ((options.topicArn !== undefined || options.region !== undefined) && format !== 'amp-alertmanager')
    throw refuse('--topic-arn/--region', `apply to --format amp-alertmanager, not ${format}`);
  switch (format) {
    case 'prometheus-rule':
      return toYaml(
        prometheusRuleManifest({
          ...(options.targets ? { targets: options.targets } : {}),
          ...(options.name !== undefined ? { name: options.name } : {}),
          ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
          ...(options.labels !== undefined ? { labels: options.labels } : {}),
        }),
      );
    case 'amp':
      return ampRuleGroupsNamespaceData({
        ...(options.targets ? { targets: options.targets } : {}),
        ...(options.ampNamespace !== undefined ? { namespace: options.ampNamespace } : {}),
      });
    case 'amp-alertmanager':
      if (options.topicArn === undefined || options.region === undefined)
        throw refuse('--topic-arn/--region', 'both are required for --format amp-alertmanager');
      return ampAlertManagerDefinition({
        topicArn: options.topicArn,
        region: options.region,
        ...(options.repeatIntervalSeconds !== undefined
          ? { repeatIntervalSeconds: options.repeatIntervalSeconds }
          : {}),
      });
    case 'promtool-test':
      return promtoolTestFile();
  }
}

/** Reads a targets file (YAML or JSON) with optional per-target `alerts` settings; a bad field names the file. */
export async function readAlertTargetsFile(path: string): Promise<AlertTarget[]> {
  const value = await readStructuredFile('--targets', path);
  try {
    return parseAlertTargets(value);
  } catch (error) {
    if (error instanceof ConfigInvalidError)
      throw new ConfigInvalidError(`--targets ${path}`, error.issues, { cause: error });
    throw error;
  }
}

/** Commander parser for `key=value` (repeatable). */
function keyValue(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const equals = value.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError(`expected key=value, got "${value}"`);
  return { ...previous, [value.slice(0, equals)]: value.slice(equals + 1) };
}

/** Commander parser for a PromQL duration in whole seconds. */
function durationOption(value: string): number {
  const seconds = parseDurationSeconds(value);
  if (seconds === undefined || seconds < 1)
    throw new InvalidArgumentError(`expected a duration such as "30m" or "4h", got "${value}"`);
  return seconds;
}

const TARGETS_HELP = [
  '',
  'Targets file (--targets, YAML or JSON): the list of targets the collector takes, each with optional `alerts`:',
  '  - name: prod-ministral              # unique; becomes the `target` label',
  '    cluster: prod                     # becomes the `cluster` label',
  '    namespace: llm',
  '    deployment: ministral             # Pods ministral-<hash>-<suffix>',
  '    model: mistralai/Ministral-8B-Instruct-2410',
  '    clusterLabel: cluster             # optional: the label that names the cluster in a shared AMP workspace',
  "    alerts:                           # optional; defaults are the monitoring guide's",
  '      dashboardUrl: https://grafana.example.com/d/vllm',
  '      runbookBaseUrl: https://wiki.example.com/vllm   # each alert links to <base>#<alertname lower-case>',
  '      repeatInterval: 4h              # used by `alerts evaluate`, not by the rule files',
  '      rules:',
  '        VLLMHighLatency: { threshold: 2.5, for: 2m, window: 5m }   # seconds; set your own SLO (default 5)',
  '        VLLMKVCacheFull: { threshold: 0.9 }                         # ratios are 0-1 fractions',
  '        VLLMPreemptionSpike: { enabled: false }',
  'Rules: VLLMHighQueueDepth, VLLMHighLatency, VLLMGPUMemoryCritical, VLLMKVCacheFull, VLLMPreemptionSpike; keys',
  'enabled, threshold, for ("0s" for none), window (only VLLMHighLatency and VLLMPreemptionSpike). Without',
  "--targets the rules match every series with the guide's defaults.",
  '',
  'Examples:',
  '  vllm-pilot alerts rules --format prometheus-rule --targets targets.yaml | kubectl apply -f -',
  '  vllm-pilot alerts rules --format amp --out rules.yaml && aws amp create-rule-groups-namespace \\',
  '      --workspace-id ws-... --name vllm-eks-pilot --data fileb://rules.yaml',
  '  vllm-pilot alerts rules --format amp-alertmanager --topic-arn arn:aws:sns:us-east-1:123456789012:vllm-eks-pilot-alerts \\',
  '      --region us-east-1 --out am.yaml   # the topic policy must let aps.amazonaws.com publish',
  '',
].join('\n');

interface RulesCommandOptions {
  format: AlertRuleFormat;
  targets?: string;
  out?: string;
  topicArn?: string;
  region?: string;
  repeatInterval?: number;
  name?: string;
  namespace?: string;
  label?: Record<string, string>;
  ampNamespace?: string;
}

/** `vllm-pilot alerts rules`: writes the alert rules as a PrometheusRule, AMP rule data or AMP alert manager config. */
export function registerAlertRulesCommand(alerts: Command): void {
  alerts
    .command('rules')
    .description('write the seven alert rules as a PrometheusRule or AMP rule/alert manager files (YAML)')
    .addOption(
      new Option('--format <format>', 'what to write').choices(Object.keys(ALERT_RULE_FORMATS)).makeOptionMandatory(),
    )
    .option('--targets <file>', 'per-target rules from a targets file (YAML/JSON, see below); default: generic rules')
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--topic-arn <arn>', 'amp-alertmanager: the Standard SNS topic AMP publishes to')
    .option('--region <region>', "amp-alertmanager: the topic's region")
    .option(
      '--repeat-interval <duration>',
      'amp-alertmanager: repeat a firing alert after (default 4h)',
      durationOption,
    )
    .option('--name <name>', 'prometheus-rule: metadata.name (default vllm-eks-pilot-alerts)')
    .option('--namespace <namespace>', 'prometheus-rule: metadata.namespace (default monitoring)')
    .option(
      '--label <key=value>',
      'prometheus-rule: a metadata label (repeatable; replaces the default release=kube-prometheus-stack)',
      keyValue,
    )
    .option('--amp-namespace <name>', 'amp: the rule groups namespace the file is for (default vllm-eks-pilot)')
    .addHelpText(
      'after',
      [
        '',
        'Formats:',
        ...Object.entries(ALERT_RULE_FORMATS).map(([format, text]) => `  ${format.padEnd(18)}${text}`),
        TARGETS_HELP,
      ].join('\n'),
    )
    .action(async (opts: RulesCommandOptions) => {
      const targets = opts.targets === undefined ? undefined : await readAlertTargetsFile(opts.targets);
      const text = renderAlertRules({
        format: opts.format,
        ...(targets !== undefined ? { targets } : {}),
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
        ...(opts.label !== undefined ? { labels: opts.label } : {}),
        ...(opts.ampNamespace !== undefined ? { ampNamespace: opts.ampNamespace } : {}),
        ...(opts.topicArn !== undefined ? { topicArn: opts.topicArn } : {}),
        ...(opts.region !== undefined ? { region: opts.region } : {}),
        ...(opts.repeatInterval !== undefined ? { repeatIntervalSeconds: opts.repeatInterval } : {}),
      });
      if (opts.out === undefined) {
        process.stdout.write(text);
        return;
      }
      await writeFile(opts.out, text);
      process.stderr.write(`wrote ${opts.out} (${opts.format})\n`);
    });
}

/** `vllm-pilot alerts`: the alerting commands. Returns the group so further subcommands can be added to it. */
export function registerAlertsCommand(program: Command): Command {
  const alerts = program
    .command('alerts')
    .description("the monitoring guide's five alerts, its 80 % KV-cache warning and the absent-series alert");
  registerAlertRulesCommand(alerts);
  registerAlertEvaluateCommand(alerts);
  registerAlertSilenceCommands(alerts);
  return alerts;
}

interface EvaluateCommandOptions extends AccountFlags {
  stateFile?: string;
  alerts?: string;
  dryRun?: boolean;
  verbose?: boolean;
  json?: boolean;
}

const EVALUATE_HELP = [
  '',
  'On the twin (--state-file), without --dry-run: one run of the alert evaluator Lambda, as EventBridge starts it:',
  "new alerts, repeats and resolved ones go to the twin's SNS topic (and through the Slack notifier to its sink).",
  '',
  'With --dry-run (the twin, or your account through the target flags or --targets): what would fire now and why,',
  "each alert's value against its threshold held for its `for` (or kept firing after it), the inhibitions, and the",
  'thresholds the last calibration set (with --history-table of a deployed stack). Nothing is sent and no state is',
  'written. Against an account, only --dry-run runs: the deployed evaluator is the one that notifies.',
  '',
  'Examples:',
  '  vllm-pilot alerts evaluate --state-file twin.json',
  '  vllm-pilot alerts evaluate --state-file twin.json --dry-run',
  '  AWS_PROFILE=prod vllm-pilot alerts evaluate --dry-run --region us-east-2 --targets targets.yaml \\',
  '      --amp-workspace ws-b226cc2a-a446-46a9-933a-ac50479a5568 --history-table vllm-eks-pilot-prod-CalibrationHistoryTable-1A2B3C',
  '',
].join('\n');

/**
 * `vllm-pilot alerts evaluate`: one run of the alert evaluator Lambda against the twin, exactly as EventBridge starts
 * it every minute: new alerts and repeats go to the twin's SNS topic (and through the Slack notifier to its sink
 * while `twin up` runs), resolved ones too; running it again right away sends nothing new. With --dry-run, on the twin
 * or an account: what would fire, without notifying or writing state.
 */
export function registerAlertEvaluateCommand(alerts: Command): void {
  const evaluate = alerts
    .command('evaluate')
    .description(
      'evaluate the alerts once: on the twin and notify through SNS (like one scheduled run), or --dry-run on the twin or your account',
    )
    .option('--state-file <file>', 'against the twin: the state file written by `twin up`')
    .option(
      '--alerts <file>',
      "the target's alert settings (YAML/JSON: repeatInterval, rules.<alert>.threshold/for/...)",
    )
    .option(
      '--dry-run',
      'only say what would fire and why: nothing sent, no state written (required against an account)',
    )
    .option('--verbose', "print the evaluator's JSON log lines (the twin, without --dry-run)")
    .option('--json', 'print the run summary as JSON');
  addAccountFlags(evaluate, ALERTS_ACCOUNT_FLAGS)
    .addHelpText('after', EVALUATE_HELP)
    .action(async (opts: EvaluateCommandOptions) => {
      // The user's file first: a mistake in it is named before the twin or the account is looked at.
      const settings = opts.alerts === undefined ? undefined : await readAlertSettingsFile(opts.alerts);
      const mode = refuseMixedModes(opts.stateFile, opts);
      if (mode === 'account' && !opts.dryRun)
        throw new CliOptionRequiredError(
          '--dry-run',
          'against an account this command only shows what would fire (the deployed evaluator notifies); or give --state-file for the twin',
        );
      if (opts.dryRun) {
        const results =
          mode === 'twin'
            ? await dryRunOnTwin(opts.stateFile as string, settings)
            : await dryRunAlertsOnAccount(opts, settings, Date.now());
        if (opts.json) return printJson(results.length === 1 ? results[0] : results);
        process.stdout.write(formatDryRun(results));
        return;
      }
      const { functionLogger, twinAlertEvaluator } = await harness();
      const state = await readTwinState(opts.stateFile as string);
      const run = twinAlertEvaluator(state, {
        ...(settings === undefined ? {} : { alerts: settings }),
        logger: functionLogger('alert-evaluator', opts.verbose ?? false),
      });
      const summary = await run();
      if (opts.json) return printJson(summary);
      const { totals } = summary;
      process.stdout.write(
        `alerts at ${summary.at}: ${totals.firing} firing, ${totals.sent} notification(s) sent, ${totals.muted} muted, ` +
          `${totals.failed} failed\n`,
      );
      for (const target of summary.targets) {
        process.stdout.write(`  ${target.target} (${target.status}): ${target.firing} firing\n`);
        for (const line of target.sent) process.stdout.write(`    sent ${line}\n`);
        for (const line of target.muted) process.stdout.write(`    muted ${line}\n`);
        for (const line of target.failed) process.stdout.write(`    FAILED ${line}\n`);
        for (const line of target.ruleFailures) process.stdout.write(`    rule not evaluated: ${line}\n`);
        for (const line of target.problems) process.stdout.write(`    problem: ${line}\n`);
      }
    });
}

/** The dry run on the twin's target: its Prometheus as AMP, its calibration history, the --alerts settings. */
async function dryRunOnTwin(stateFile: string, settings: unknown): Promise<DryRunTarget[]> {
  const state = await readTwinState(stateFile);
  const { history, client } = twinHistoryStore(state);
  try {
    return await dryRunAlerts(
      [{ target: twinTarget(state), settings: parseAlertSettings(settings) }],
      { source: twinMetricsSource(state), history },
      Date.now(),
    );
  } finally {
    client.destroy();
  }
}

/** Reads and checks a target's alert settings file (YAML or JSON); a bad field fails here, naming it. */
async function readAlertSettingsFile(path: string): Promise<unknown> {
  const input = await readStructuredFile('--alerts', path);
  try {
    parseAlertSettings(input);
  } catch (error) {
    // Name the flag and the file: "invalid --alerts FILE: rules.queueDepth: unknown key ...".
    if (error instanceof ConfigInvalidError)
      throw new ConfigInvalidError(`--alerts ${path}`, error.issues, { cause: error });
    throw error;
  }
  return input;
}
