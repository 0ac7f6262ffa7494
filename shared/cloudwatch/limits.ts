/**
 * CloudWatch PutMetricData limits and vocabulary, in one place for the adapter and the twin.
 *
 * Source: Amazon CloudWatch API Reference, `PutMetricData`, `MetricDatum` and `Dimension`
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricData.html): at most 1000 metrics and
 * 1 MB per request (gzip allowed), at most 30 dimensions per metric, names 1-255 and dimension values 1-1024 ASCII
 * characters, values within ±2^360, NaN and ±Infinity not supported; namespaces starting with `AWS/` are reserved.
 */
export const PUT_METRIC_DATA_LIMITS = {
  maxDatumsPerRequest: 1000,
  /**
   * What the adapter packs per request, counted on the uncompressed JSON body. The documentation says "1 MB" without
   * saying 10^6 or 2^20 bytes, or before or after gzip: packing to 10^6 uncompressed bytes is safe under every reading.
   */
  maxRequestBytes: 1_000_000,
  /** What the twin accepts (the generous reading of "1 MB"), so that it never refuses what the adapter packs. */
  hardMaxRequestBytes: 1_048_576,
  maxDimensionsPerDatum: 30,
  /** Namespace, metric name and dimension name. */
  maxNameLength: 255,
  maxDimensionValueLength: 1024,
  maxAbsValue: 2 ** 360,
  minAbsNonZeroValue: 2 ** -360,
  reservedNamespacePrefix: 'AWS/',
} as const;

/** The StandardUnit values PutMetricData accepts. */
export const STANDARD_UNITS = [
  'Seconds',
  'Microseconds',
  'Milliseconds',
  'Bytes',
  'Kilobytes',
  'Megabytes',
  'Gigabytes',
  'Terabytes',
  'Bits',
  'Kilobits',
  'Megabits',
  'Gigabits',
  'Terabits',
  'Percent',
  'Count',
  'Bytes/Second',
  'Kilobytes/Second',
  'Megabytes/Second',
  'Gigabytes/Second',
  'Terabytes/Second',
  'Bits/Second',
  'Kilobits/Second',
  'Megabits/Second',
  'Gigabits/Second',
  'Terabits/Second',
  'Count/Second',
  'None',
] as const;

export type StandardUnit = (typeof STANDARD_UNITS)[number];
