import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvalidArgumentError, type Command } from 'commander';
import {
  activeSilence,
  DynamoDbSilenceStore,
  MAX_SILENCE_SECONDS,
  silenceTargetKey,
  type Silence,
  type SilenceStore,
} from '../../shared/alerts/silences/index.js';
import { parseDurationSeconds } from '../../shared/alerts/rules/index.js';
import { systemClock } from '../../shared/clock/index.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { harness } from '../harness.js';
import { printJson } from '../options.js';

/**
 * `vllm-pilot alerts silence | silences | unsilence`: people's silences, stored where the alert evaluator reads them
 * (the stack's silences table, or the twin's), beside the calibrations' own. A silence mutes every alert of one
 * target until it ends; the evaluator records what it would have sent as muted.
 */

/** A bad option value found while the command runs (commander's own errors are usage errors). */
export class AlertSilenceCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AlertSilenceCommandError';
  }
}

interface StoreOptions {
  stateFile?: string;
  table?: string;
  region?: string;
  target?: string;
  json?: boolean;
}

const WHERE_HELP = [
  '',
  "Where silences are kept: the twin of --state-file, or the stack's table on AWS with --table (the stack output",
  'AlertSilencesTableName) and --region, with your usual AWS credentials. The target is <cluster>/<namespace>/',
  "<deployment>; with --state-file it defaults to the twin's.",
  '',
  'Examples:',
  '  vllm-pilot alerts silence --state-file twin.json --for 2h --reason "node pool upgrade"',
  '  vllm-pilot alerts silence --table vllm-eks-pilot-prod-AlertSilencesTable-ABC --region us-east-2 \\',
  '    --target ai-eks/default/vllm-inference-app --for 30m --reason "planned load test"',
  '  vllm-pilot alerts silences --table ... --region us-east-2 --target ai-eks/default/vllm-inference-app',
  '  vllm-pilot alerts unsilence --table ... --region us-east-2 --target ai-eks/default/vllm-inference-app --id ID',
].join('\n');

function withStoreOptions(command: Command): Command {
  return command
    .option('--state-file <file>', 'the twin of this state file (written by `twin up`)')
    .option('--table <name>', "the stack's silences table (AWS)")
    .option('--region <region>', 'the region of --table')
    .option('--target <cluster/namespace/deployment>', "the target (default with --state-file: the twin's)")
    .option('--json', 'print JSON')
    .addHelpText('after', WHERE_HELP);
}

/** The store and the target key the options name; AlertSilenceCommandError when they name neither, or both. */
async function storeFor(
  opts: StoreOptions,
): Promise<{ store: SilenceStore; target: string | undefined; close: () => void }> {
  if ((opts.stateFile === undefined) === (opts.table === undefined))
    throw new AlertSilenceCommandError(
      'give either --state-file (the twin) or --table with --region (the stack on AWS): where the silences are kept',
    );
  if (opts.stateFile !== undefined) {
    const state = await readTwinState(opts.stateFile);
    const table = state.aws.alertSilencesTable;
    if (table === undefined)
      throw new AlertSilenceCommandError(
        `--state-file ${opts.stateFile}: this twin has no silences table (started by an older version): restart it`,
      );
    const { TWIN_CREDENTIALS } = await harness();
    const client = new DynamoDBClient({
      region: state.region,
      endpoint: state.aws.dynamodbEndpoint,
      credentials: TWIN_CREDENTIALS,
    });
    return {
      store: new DynamoDbSilenceStore({ client, tableName: table }),
      target:
        opts.target ??
        silenceTargetKey({ cluster: state.clusterName, namespace: state.namespace, deployment: state.deployment }),
      close: () => client.destroy(),
    };
  }
  if (opts.region === undefined)
    throw new AlertSilenceCommandError('--table needs --region: the region of the stack that holds it');
  const client = new DynamoDBClient({ region: opts.region });
  return {
    store: new DynamoDbSilenceStore({ client, tableName: opts.table as string }),
    target: opts.target,
    close: () => client.destroy(),
  };
}

function requireTarget(target: string | undefined): string {
  if (target === undefined)
    throw new AlertSilenceCommandError('--target is required with --table: <cluster>/<namespace>/<deployment>');
  return target;
}

/** Commander parser for --for: a duration from 1 minute to MAX_SILENCE_SECONDS. */
function silenceDuration(value: string): number {
  const seconds = parseDurationSeconds(value);
  if (seconds === undefined || seconds < 60 || seconds > MAX_SILENCE_SECONDS)
    throw new InvalidArgumentError(
      `expected a duration from 1m to ${MAX_SILENCE_SECONDS / 86_400}d such as "30m" or "2h", got "${value}"`,
    );
  return seconds;
}

function describe(silence: Silence, nowMs: number): string {
  const state = silence.startsAtMs <= nowMs && nowMs < silence.endsAtMs ? 'active' : 'ended';
  return (
    `${silence.id} (${silence.kind}, ${state}) ${silence.target} until ${new Date(silence.endsAtMs).toISOString()}: ` +
    `${silence.reason} [by ${silence.createdBy}]`
  );
}

export function registerAlertSilenceCommands(alerts: Command): void {
  withStoreOptions(
    alerts
      .command('silence')
      .description("mute one target's alerts for a while, with a reason (the evaluator records them as muted)")
      .requiredOption('--for <duration>', 'how long, e.g. 30m, 2h (at most 7d)', silenceDuration)
      .requiredOption('--reason <text>', 'why, on one line: it goes with every muted notification'),
  ).action(async (opts: StoreOptions & { for: number; reason: string }) => {
    const { store, target, close } = await storeFor(opts);
    try {
      const nowMs = systemClock.now();
      const silence: Silence = {
        target: requireTarget(target),
        id: `manual-${randomUUID().slice(0, 8)}`,
        kind: 'manual',
        reason: opts.reason,
        createdBy: userInfo().username,
        startsAtMs: nowMs,
        endsAtMs: nowMs + opts.for * 1000,
      };
      await store.put(silence);
      if (opts.json) return printJson(silence);
      process.stdout.write(`silenced ${describe(silence, nowMs)}\n`);
    } finally {
      close();
    }
  });

  withStoreOptions(
    alerts.command('silences').description("list a target's silences (a calibration's and people's), active or ended"),
  ).action(async (opts: StoreOptions) => {
    const { store, target, close } = await storeFor(opts);
    try {
      const nowMs = systemClock.now();
      const silences = await store.list(requireTarget(target));
      if (opts.json) return printJson({ active: activeSilence(silences, nowMs)?.id ?? null, silences });
      if (silences.length === 0) process.stdout.write(`no silence for ${target}\n`);
      for (const silence of silences) process.stdout.write(`${describe(silence, nowMs)}\n`);
    } finally {
      close();
    }
  });

  withStoreOptions(
    alerts
      .command('unsilence')
      .description('remove a silence before it ends (its id from `alerts silences`)')
      .requiredOption('--id <id>', 'the silence to remove'),
  ).action(async (opts: StoreOptions & { id: string }) => {
    const { store, target, close } = await storeFor(opts);
    try {
      const key = requireTarget(target);
      if (!(await store.delete(key, opts.id)))
        throw new AlertSilenceCommandError(`no silence ${opts.id} on ${key}: see \`vllm-pilot alerts silences\``);
      if (opts.json) return printJson({ removed: opts.id, target: key });
      process.stdout.write(`removed silence ${opts.id} of ${key}\n`);
    } finally {
      close();
    }
  });
}
