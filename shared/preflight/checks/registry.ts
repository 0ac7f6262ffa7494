import { alertRules } from './alertRules.js';
import { dcgmExporter } from './dcgmExporter.js';
import { gpuMemorySettings } from './gpuMemorySettings.js';
import { grafanaDashboards } from './grafanaDashboards.js';
import { karpenterDoNotDisrupt } from './karpenterDoNotDisrupt.js';
import { kedaScaledObject } from './kedaScaledObject.js';
import { loadTest } from './loadTest.js';
import { scaleCycle } from './scaleCycle.js';
import { serviceMonitorScraping } from './serviceMonitorScraping.js';
import { vllmMetricsExposed } from './vllmMetricsExposed.js';
import { warmup } from './warmup.js';
import { PreflightUnknownCheckError } from '../errors.js';
import { CHECK_IDS, type CheckId, type PreflightCheck } from '../types.js';

/** The monitoring guide's eleven production double-check points (section 7), in its order. */
export const PREFLIGHT_CHECKS: readonly PreflightCheck[] = Object.freeze([
  vllmMetricsExposed,
  serviceMonitorScraping,
  dcgmExporter,
  grafanaDashboards,
  alertRules,
  kedaScaledObject,
  karpenterDoNotDisrupt,
  loadTest,
  warmup,
  gpuMemorySettings,
  scaleCycle,
]);

// The registry must list every id once, in item order: anything else is a programming error.
if (
  PREFLIGHT_CHECKS.map((c) => `${c.item}:${c.id}`).join() !==
  Object.values(CHECK_IDS)
    .map((id, i) => `${i + 1}:${id}`)
    .join()
)
  throw new Error(`PREFLIGHT_CHECKS must list ${Object.values(CHECK_IDS).join(', ')} as items 1-11`);

const BY_ID = new Map<string, PreflightCheck>(PREFLIGHT_CHECKS.map((check) => [check.id, check]));

/** The check with this id; throws PreflightUnknownCheckError naming the known ids. */
export function checkById(id: CheckId | (string & {})): PreflightCheck {
  const check = BY_ID.get(id);
  if (check === undefined) throw new PreflightUnknownCheckError(id, [...BY_ID.keys()]);
  return check;
}
