/**
 * Metrics: vLLM's and DCGM's names, PromQL built safely, the catalog, and the AMP (Prometheus API) adapters of the
 * MetricsSource and AlertRulesSource ports.
 */
export { HttpMetricsSource, querySingleValue } from './ampClient.js';
export {
  domainOfUnit,
  guardByLabel,
  guardSamples,
  guardSeries,
  guardSeriesCount,
  guardSingleValue,
  guardSinglePoints,
  guardValue,
  isRefusedAnswer,
} from './answerGuard.js';
export { CATALOG, catalogEntry, type CatalogBuildOptions, type CatalogEntry } from './catalog.js';
export {
  MetricsAbortedError,
  MetricsError,
  MetricsHttpError,
  MetricsMissingLabelError,
  MetricsMultipleSeriesError,
  MetricsNetworkError,
  MetricsNonFiniteValueError,
  MetricsRedirectRefusedError,
  MetricsResponseTooLargeError,
  MetricsTimeoutError,
  MetricsTooManySeriesError,
  MetricsValueOutOfDomainError,
  PromqlInvalidArgumentError,
} from './errors.js';
export {
  CADVISOR,
  DCGM,
  VALUE_DOMAIN,
  VLLM,
  VLLM_RENAMED,
  domainOfMetric,
  type RenamedVllmMetric,
  type ValueDomain,
} from './names.js';
export {
  DCGM_LABELS,
  aggregate,
  assertDuration,
  assertMetricName,
  dcgmMatchers,
  dcgmSelector,
  dropNaN,
  eq,
  escapeLabelValue,
  formatMatchers,
  histogramQuantile,
  matchRegex,
  overVllmNames,
  plus,
  podNamePattern,
  rate,
  ratio,
  scale,
  selector,
  vllmGauge,
  vllmHistogramQuantile,
  vllmRate,
  vllmMatchers,
  vllmSelector,
  type LabelMatcher,
  type VllmMetricRef,
} from './promql.js';
export { readCatalog } from './readCatalog.js';
export { HttpAlertRulesSource } from './rulesClient.js';
export type {
  AlertRulesSource,
  CatalogReading,
  CatalogResult,
  InstantQueryOptions,
  InstantSample,
  MetricsSource,
  RangeSeries,
  RegisteredAlertRule,
} from './types.js';
