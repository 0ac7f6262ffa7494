import { PutMetricDataCommand, type CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import {
  CloudWatchBatchFailedError,
  CloudWatchNamespaceInvalidError,
  CloudWatchPublishAbortedError,
} from './errors.js';
import { PUT_METRIC_DATA_LIMITS } from './limits.js';
import { mapWithConcurrency } from '../util/index.js';
import { planBatches, type BatchLimits } from './planBatches.js';
import type { Datum, FailedBatch, MetricsSink, PublishResult } from './types.js';
import { namespaceProblem } from './validate.js';

export interface CloudWatchMetricsSinkOptions {
  /** Built by the caller with region, endpoint and credentials; its retry policy applies to every batch. */
  client: Pick<CloudWatchClient, 'send'>;
  /** Requests in flight at once. Default 4: CloudWatch's PutMetricData TPS quota is shared by the whole account. */
  concurrency?: number;
  /** Overrides of the PutMetricData limits (tests); the defaults are CloudWatch's. */
  limits?: Partial<BatchLimits>;
}

/** MetricsSink backed by CloudWatch PutMetricData: validated, batched, sent with bounded concurrency. */
export class CloudWatchMetricsSink implements MetricsSink {
  readonly #client: Pick<CloudWatchClient, 'send'>;
  readonly #concurrency: number;
  readonly #limits: BatchLimits;

  constructor(options: CloudWatchMetricsSinkOptions) {
    const concurrency = options.concurrency ?? 4;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`concurrency: ${concurrency} is not valid; accepted: an integer >= 1`);
    this.#client = options.client;
    this.#concurrency = concurrency;
    this.#limits = {
      maxDatumsPerRequest: options.limits?.maxDatumsPerRequest ?? PUT_METRIC_DATA_LIMITS.maxDatumsPerRequest,
      maxRequestBytes: options.limits?.maxRequestBytes ?? PUT_METRIC_DATA_LIMITS.maxRequestBytes,
    };
  }

  /**
   * Publishes `datums` to `namespace`. Throws only for a bad namespace (nothing could be sent); every other problem is
   * reported in the result: datums CloudWatch would refuse are dropped with the reason, failed requests are listed.
   */
  async publish(namespace: string, datums: readonly Datum[], signal?: AbortSignal): Promise<PublishResult> {
    const problem = namespaceProblem(namespace);
    if (problem !== undefined) throw new CloudWatchNamespaceInvalidError(namespace, problem);

    const plan = planBatches(namespace, datums, this.#limits);
    const failedBatches: FailedBatch[] = [];
    let published = 0;
    let requests = 0;

    await mapWithConcurrency(plan.batches, this.#concurrency, async (indexes, position) => {
      if (signal?.aborted) {
        failedBatches.push({
          size: indexes.length,
          datumIndexes: indexes,
          error: new CloudWatchPublishAbortedError(indexes.length, { cause: signal.reason }),
        });
        return;
      }
      requests += 1;
      try {
        const command = new PutMetricDataCommand({
          Namespace: namespace,
          MetricData: indexes.map((index) => toSdkDatum(datums[index] as Datum)),
        });
        await this.#client.send(command, { abortSignal: signal });
        published += indexes.length;
      } catch (error) {
        const details = {
          namespace,
          size: indexes.length,
          batch: position + 1,
          batches: plan.batches.length,
          awsErrorName: error instanceof Error ? error.name : 'Error',
          httpStatus: httpStatusOf(error),
        };
        const message = error instanceof Error ? error.message : String(error);
        failedBatches.push({
          size: indexes.length,
          datumIndexes: indexes,
          error: new CloudWatchBatchFailedError(details, message, isRetryable(error), { cause: error }),
        });
      }
    });

    return { published, requests, failedBatches, dropped: plan.dropped };
  }
}

function toSdkDatum(datum: Datum) {
  return {
    MetricName: datum.MetricName,
    Dimensions: datum.Dimensions.map((dimension) => ({ Name: dimension.Name, Value: dimension.Value })),
    Timestamp: datum.Timestamp,
    Value: datum.Value,
    Unit: datum.Unit,
  };
}

function httpStatusOf(error: unknown): number | undefined {
  const metadata = (error as { $metadata?: { httpStatusCode?: unknown } } | undefined)?.$metadata;
  return typeof metadata?.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}

// The SDK marks a 4xx as a client fault: resending the same body will not help, except when it is throttling.
// Server faults and network errors (no fault) may pass on a later attempt.
function isRetryable(error: unknown): boolean {
  const { name, $fault } = (error ?? {}) as { name?: unknown; $fault?: unknown };
  if (name === 'Throttling' || name === 'ThrottlingException') return true;
  if (name === 'AbortError') return false;
  return $fault !== 'client';
}
