import { parseTargets } from '../../shared/config/index.js';
import { type CatalogResult, readCatalog } from '../../shared/metrics/index.js';
import { type AccountFlagGroups, type AccountFlags, accountRequest, targetSelection } from './options.js';
import { probeModel } from './probes.js';
import { openAccount } from './session.js';
import { readTargets } from './targets.js';

/** The flags `metrics read` takes against an account: the target and the workspace. */
export const METRICS_ACCOUNT_FLAGS: AccountFlagGroups = { amp: true };

/**
 * The catalog of each target in the user's AMP workspace, read with their credentials (queries only). A model name
 * that matches no series is refused first, naming the ones AMP has (probeModel).
 */
export async function readCatalogOnAccount(
  flags: AccountFlags,
  options: { timeMs: number; rateWindow: string },
): Promise<CatalogResult[]> {
  const targets = await readTargets(targetSelection(flags), 'metricsCollector', parseTargets);
  const account = await openAccount(accountRequest(flags, METRICS_ACCOUNT_FLAGS));
  try {
    const source = account.metrics();
    const results: CatalogResult[] = [];
    for (const target of targets) {
      await probeModel(source, target);
      results.push(await readCatalog(source, target, options));
    }
    return results;
  } finally {
    account.close();
  }
}
