import type { StandardUnit } from './limits.js';

/** A CloudWatch dimension: part of a metric's identity. */
export interface Dimension {
  Name: string;
  Value: string;
}

/** One data point, shaped like the SDK's `MetricDatum` (single `Value` form). */
export interface Datum {
  MetricName: string;
  Unit: StandardUnit;
  Value: number;
  Timestamp: Date;
  Dimensions: Dimension[];
}

/** A datum the sink refused to send because CloudWatch would reject it (and with it, its whole request). */
export interface DroppedDatum {
  /** Position of the datum in the array given to `publish`. */
  index: number;
  metricName: string;
  reason: string;
}

/** A request CloudWatch did not accept; its datums were not stored. */
export interface FailedBatch {
  size: number;
  /** Positions of the batch's datums in the array given to `publish`. */
  datumIndexes: number[];
  error: Error;
}

/** What a `publish` call achieved: one failing batch does not stop the others. */
export interface PublishResult {
  /** Datums CloudWatch accepted. */
  published: number;
  /** Requests sent (successful or not). */
  requests: number;
  failedBatches: FailedBatch[];
  dropped: DroppedDatum[];
}

/** The MetricsSink port: where the collector writes datums (CloudWatch in AWS, the twin's endpoint locally). */
export interface MetricsSink {
  publish(namespace: string, datums: readonly Datum[], signal?: AbortSignal): Promise<PublishResult>;
}
