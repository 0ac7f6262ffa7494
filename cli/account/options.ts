import { Option, type Command } from 'commander';
import { AMP_WORKSPACE_ID } from '../../shared/alerts/amp/index.js';
import { REGION, TABLE_NAME } from '../../shared/config/index.js';
import { CliOptionInvalidError, CliOptionRequiredError } from '../errors.js';
import { endpointsFromEnvironment } from './endpoints.js';
import type { AccountRequest } from './session.js';
import { TARGET_FLAGS, type TargetFlagField, type TargetSelection } from './targets.js';

/**
 * The flags that point a command at the user's own account (instead of a twin's `--state-file`): the target, the
 * region, the AMP workspace, how to reach the cluster, and a deployed stack's tables.
 */

/** What commander gives the action for these flags. */
export interface AccountFlags {
  targets?: string;
  name?: string;
  cluster?: string;
  namespace?: string;
  deployment?: string;
  model?: string;
  clusterLabel?: string;
  service?: string;
  scaledObject?: string;
  region?: string;
  ampWorkspace?: string;
  ampRegion?: string;
  kubeconfig?: string;
  context?: string;
  historyTable?: string;
  alertStateTable?: string;
}

/** Which groups of flags a command takes. */
export interface AccountFlagGroups {
  /** --service and --scaled-object (preflight's target fields). */
  preflightFields?: boolean;
  /** The AMP workspace (every command that reads metrics). */
  amp?: boolean;
  /** --kubeconfig and --context (commands that read the cluster). */
  kube?: boolean;
  /** --history-table (a deployed stack's calibration history). */
  history?: boolean | 'required';
  /** --alert-state-table (the evaluator's heartbeat). */
  alertState?: boolean;
}

/** Adds the account flags to `command` (help grouped after its own flags). */
export function addAccountFlags(command: Command, groups: AccountFlagGroups): Command {
  command
    .option(
      '--targets <file>',
      "against an account: the stack's `targets` list (YAML/JSON) instead of the target flags",
    )
    .option('--name <name>', "against an account: the target's name (default: the Deployment's)")
    .option('--cluster <name>', 'against an account: the EKS cluster')
    .option('--namespace <namespace>', "against an account: the vLLM Deployment's namespace")
    .option('--deployment <name>', 'against an account: the vLLM Deployment')
    .option('--model <name>', "against an account: the served model name (vLLM's --served-model-name)")
    .option('--cluster-label <label>', 'against an account: the label naming the cluster in a shared AMP workspace');
  if (groups.preflightFields)
    command
      .option('--service <name>', "against an account: the vLLM Service (default: the Deployment's Services)")
      .option(
        '--scaled-object <name>',
        'against an account: the KEDA ScaledObject (default: the one scaling the Deployment)',
      );
  command.option('--region <region>', "against an account: the clusters' region (default: AWS_REGION)");
  if (groups.amp)
    command
      .option('--amp-workspace <id|url>', 'against an account: the AMP workspace id (ws-...) or its URL')
      .option(
        '--amp-region <region>',
        "against an account: the workspace's region (default: the URL's, else --region)",
      );
  if (groups.kube)
    command
      .option('--kubeconfig <file>', 'against an account: reach the cluster through this kubeconfig instead of EKS')
      .option(
        '--context <name>',
        'against an account: the kubeconfig context (implies the kubeconfig; default: its current one)',
      );
  if (groups.history)
    command.addOption(
      new Option(
        '--history-table <table>',
        `against an account: a deployed stack's calibration history table${groups.history === 'required' ? ' (required)' : ''}`,
      ),
    );
  if (groups.alertState)
    command.option(
      '--alert-state-table <table>',
      "against an account: a deployed stack's alert state table (the evaluator's heartbeat)",
    );
  return command;
}

/** The account flags given (any of them), by their names on the command line. */
export function givenAccountFlags(flags: AccountFlags): string[] {
  const names: Record<keyof AccountFlags, string> = {
    targets: '--targets',
    ...TARGET_FLAGS,
    region: '--region',
    ampWorkspace: '--amp-workspace',
    ampRegion: '--amp-region',
    kubeconfig: '--kubeconfig',
    context: '--context',
    historyTable: '--history-table',
    alertStateTable: '--alert-state-table',
  };
  return (Object.keys(names) as Array<keyof AccountFlags>)
    .filter((key) => flags[key] !== undefined)
    .map((key) => names[key]);
}

/**
 * `--state-file` (the twin) or the account flags, never both: a command that mixed them would answer for one while
 * the user read the other.
 */
export function refuseMixedModes(stateFile: string | undefined, flags: AccountFlags): 'twin' | 'account' {
  const given = givenAccountFlags(flags);
  if (stateFile !== undefined && given.length > 0)
    throw new CliOptionInvalidError(
      '--state-file',
      stateFile,
      `either the twin's state file or a target in your account (${given.join(', ')}), not both`,
    );
  return stateFile === undefined ? 'account' : 'twin';
}

/** The target selection of the flags. */
export function targetSelection(flags: AccountFlags, extra?: Record<string, unknown>): TargetSelection {
  const fields: Partial<Record<TargetFlagField, string>> = {};
  for (const field of Object.keys(TARGET_FLAGS) as TargetFlagField[])
    if (flags[field] !== undefined) fields[field] = flags[field];
  return {
    ...(flags.targets === undefined ? {} : { file: flags.targets }),
    flags: fields,
    ...(extra === undefined ? {} : { extra }),
  };
}

/** Region names as AWS writes them. */
function regionFlag(flag: string, value: string): string {
  if (!REGION.test(value)) throw new CliOptionInvalidError(flag, value, 'an AWS region such as us-east-2');
  return value;
}

/** The region of an AMP workspace URL (`aps-workspaces.<region>.amazonaws.com`), or undefined. */
function regionOfWorkspaceUrl(url: string): string | undefined {
  return /^https:\/\/aps-workspaces\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?\//.exec(url)?.[1];
}

function tableFlag(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!TABLE_NAME.test(value))
    throw new CliOptionInvalidError(flag, value, 'a DynamoDB table name: 3-255 letters, digits, "_", "-" or "."');
  return value;
}

/**
 * The account request of the flags: the region (flag, else AWS_REGION / AWS_DEFAULT_REGION), the workspace when the
 * command reads AMP, the kubeconfig when asked for, the stack's tables, and the endpoint overrides of `env`.
 */
export function accountRequest(
  flags: AccountFlags,
  groups: AccountFlagGroups,
  env: Readonly<Record<string, string | undefined>> = process.env,
): AccountRequest {
  const regionGiven = flags.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (regionGiven === undefined || regionGiven === '')
    throw new CliOptionRequiredError('--region', 'an AWS region such as us-east-2 (or set AWS_REGION)');
  const region = regionFlag(flags.region === undefined ? 'AWS_REGION' : '--region', regionGiven);
  const request: AccountRequest = { region, endpoints: endpointsFromEnvironment(env) };
  if (groups.amp) {
    const workspace = flags.ampWorkspace;
    if (workspace === undefined)
      throw new CliOptionRequiredError('--amp-workspace', 'the AMP workspace id (ws-...) or its URL');
    const isUrl = /^https?:\/\/[^/]+/.test(workspace);
    if (!isUrl && !AMP_WORKSPACE_ID.test(workspace))
      throw new CliOptionInvalidError(
        '--amp-workspace',
        workspace,
        'a workspace id (ws-<uuid>) or URL (https://aps-workspaces.<region>.amazonaws.com/workspaces/ws-.../)',
      );
    const ampRegion =
      flags.ampRegion === undefined
        ? ((isUrl ? regionOfWorkspaceUrl(workspace) : undefined) ?? region)
        : regionFlag('--amp-region', flags.ampRegion);
    request.amp = { workspace, region: ampRegion };
  }
  if (groups.kube && (flags.kubeconfig !== undefined || flags.context !== undefined))
    request.kubeconfig = {
      ...(flags.kubeconfig === undefined ? {} : { path: flags.kubeconfig }),
      ...(flags.context === undefined ? {} : { context: flags.context }),
    };
  const historyTable = tableFlag('--history-table', flags.historyTable);
  if (groups.history === 'required' && historyTable === undefined)
    throw new CliOptionRequiredError(
      '--history-table',
      "the deployed stack's calibration history table (its output CalibrationHistoryTableName)",
    );
  if (historyTable !== undefined) request.historyTable = historyTable;
  const alertStateTable = tableFlag('--alert-state-table', flags.alertStateTable);
  if (alertStateTable !== undefined) request.alertStateTable = alertStateTable;
  return request;
}
