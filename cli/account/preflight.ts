import { InvalidArgumentError } from 'commander';
import { parsePreflightTargets } from '../../functions/preflight/config.js';
import type { CalibrationHistoryStore } from '../../shared/calibration/history/index.js';
import { systemClock } from '../../shared/clock/index.js';
import {
  ALERTING_ENGINES,
  type AlertingEngine,
  parsePreflightSettings,
  type PreflightReport,
  type PreflightSettings,
  PreflightSettingsInvalidError,
} from '../../shared/preflight/index.js';
import { runPreflight } from '../../shared/preflight/checks/index.js';
import { mapWithConcurrency } from '../../shared/util/index.js';
import { CliFileInvalidError, CliOptionRequiredError } from '../errors.js';
import { readStructuredFile } from '../readFile.js';
import { type AccountFlags, accountRequest, type AccountFlagGroups, targetSelection } from './options.js';
import { probeCluster } from './probes.js';
import { openAccount } from './session.js';
import { readTargets } from './targets.js';

/** The flags `preflight` takes against an account. */
export const PREFLIGHT_ACCOUNT_FLAGS: AccountFlagGroups = {
  preflightFields: true,
  amp: true,
  kube: true,
  history: true,
  alertState: true,
};

export interface PreflightAccountOptions {
  /** Only the target of this name (--target). */
  target?: string;
  /** The stack's `preflightSettings` (YAML/JSON); omitted: the defaults, suited to AWS. */
  settings?: string;
  alertingEngine?: AlertingEngine;
  ampRuleNamespace?: string;
}

/** Targets checked at once, as the function does. */
const TARGET_CONCURRENCY = 4;

/**
 * Without a stack, there is no calibration history: checks 8 and 10 then find no record, which is what a cluster
 * never calibrated has.
 */
const NO_HISTORY: CalibrationHistoryStore = {
  put: () => Promise.reject(new Error('preflight never writes the calibration history')),
  latest: () => Promise.resolve(undefined),
  list: () => Promise.resolve([]),
};

/**
 * The eleven checks of each target in the user's account, with their credentials: runPreflight with the adapters the
 * preflight function builds (AMP over SigV4, EKS, DynamoDB), but nothing published and nothing written. A cluster the
 * identity cannot reach is one line (probeCluster) before any check runs.
 */
export async function preflightOnAccount(
  flags: AccountFlags,
  options: PreflightAccountOptions,
): Promise<PreflightReport[]> {
  const all = await readTargets(targetSelection(flags), 'preflight', (value) =>
    parsePreflightTargets(JSON.stringify(value)),
  );
  const targets = options.target === undefined ? all : all.filter((target) => target.name === options.target);
  if (targets.length === 0)
    // A usage error (exit 2), as on the twin: say which names exist.
    throw new InvalidArgumentError(
      `--target: no target named ${JSON.stringify(options.target)}; the targets are ${all.map((t) => t.name).join(', ')}`,
    );
  const settings = await readSettings(options);
  const request = accountRequest(flags, PREFLIGHT_ACCOUNT_FLAGS);
  const account = await openAccount(request);
  try {
    for (const target of targets) await probeCluster(account.cluster(target.cluster), target, account.region);
    const alerting =
      settings.alertingEngine === ALERTING_ENGINES.amp
        ? { ampRuleGroups: account.ampRuleGroups() }
        : account.heartbeat === undefined
          ? {}
          : { heartbeat: account.heartbeat };
    const metrics = account.metrics();
    const rules = account.rules();
    return await mapWithConcurrency(targets, TARGET_CONCURRENCY, (target) =>
      runPreflight({
        target,
        cluster: account.cluster(target.cluster),
        metrics,
        rules,
        alerting,
        history: account.history ?? NO_HISTORY,
        settings,
        clock: systemClock,
      }),
    );
  } finally {
    account.close();
  }
}

/** The settings file (the stack's preflightSettings) with the engine flags over it; a bad field names the file. */
async function readSettings(options: PreflightAccountOptions): Promise<PreflightSettings> {
  const value = options.settings === undefined ? {} : await readStructuredFile('--settings', options.settings);
  let settings: PreflightSettings;
  try {
    settings = parsePreflightSettings(value ?? {}, '--settings');
  } catch (error) {
    if (!(error instanceof PreflightSettingsInvalidError) || options.settings === undefined) throw error;
    const first = error.issues[0];
    throw new CliFileInvalidError(
      '--settings',
      options.settings,
      `${first?.path ?? ''}: ${first?.message ?? error.message}`,
      undefined,
      {
        cause: error,
      },
    );
  }
  const engine = options.alertingEngine ?? settings.alertingEngine;
  if (engine === ALERTING_ENGINES.amp && (options.ampRuleNamespace ?? settings.ampRuleNamespace) === undefined)
    throw new CliOptionRequiredError(
      '--amp-rule-namespace',
      'the rule groups namespace the AMP engine installs (the stack names it <service>-<stage>)',
    );
  return {
    ...settings,
    alertingEngine: engine,
    ...(options.ampRuleNamespace === undefined ? {} : { ampRuleNamespace: options.ampRuleNamespace }),
  };
}
