import { type CatalogBuildOptions, catalogEntry } from '../metrics/index.js';
import type { Target } from '../config/index.js';
import type { PanelQuery } from './types.js';
import { builtQuery, catalogQuery } from './variables.js';

/** A panel query that is the metrics catalog entry `id` (the same PromQL the monitor publishes to CloudWatch). */
export function fromCatalog(id: string, legend: string): PanelQuery {
  return { expr: catalogQuery(id), legend };
}

/** A panel query made with the PromQL builders, for readings the catalog does not publish (e.g. TTFT p50). */
export function fromBuilder(
  build: (target: Target, options: CatalogBuildOptions) => string,
  legend: string,
): PanelQuery {
  return { expr: builtQuery(build), legend };
}

/** The catalog's explanation of entry `id` (meaning and normal range), reused as the panel description. */
export function describe(id: string): string {
  return catalogEntry(id).description;
}

/** Legends by breakdown: the catalog's per-Pod entries keep `pod`, its per-GPU entries `UUID` and `pod`. */
export const LEGENDS = { pod: '{{pod}}', gpu: '{{UUID}} ({{pod}})' } as const;
