/** CloudWatch metrics: the MetricsSink port, its adapter, and the limits of PutMetricData. */
export { CloudWatchMetricsSink } from './CloudWatchMetricsSink.js';
export { PUT_METRIC_DATA_LIMITS } from './limits.js';
export type { Datum, Dimension, MetricsSink, PublishResult } from './types.js';
export {
  dimensionNameProblem,
  dimensionValueProblem,
  metricNameProblem,
  namespaceProblem,
  unitProblem,
  valueProblem,
} from './validate.js';
