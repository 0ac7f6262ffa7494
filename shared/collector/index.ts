/** The metrics collector: the catalog of every target read from AMP and published to CloudWatch. */
export { collectMetrics } from './collectMetrics.js';
export { CollectorAllTargetsFailedError } from './errors.js';
export type { CollectResult, ReadCatalogFn, TargetCollectResult } from './types.js';
