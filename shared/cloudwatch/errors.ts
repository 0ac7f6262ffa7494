/**
 * Errors of the cloudwatch module. Every class extends `CloudWatchError`, sets `name` (Step Functions `Retry`/`Catch`
 * match on it) and says whether retrying can help. None carries credentials.
 */

/** Base class of every error raised by `shared/cloudwatch`. */
export class CloudWatchError extends Error {
  /** True when sending the same request again later may succeed (throttling, 5xx, network). */
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CloudWatchError';
    this.retryable = retryable;
  }
}

/** The namespace would be refused by CloudWatch, so no request was sent. */
export class CloudWatchNamespaceInvalidError extends CloudWatchError {
  readonly namespace: string;

  constructor(namespace: string, problem: string) {
    super(
      `namespace ${JSON.stringify(namespace)} ${problem}; accepted: 1-255 printable ASCII characters, not starting with ":" or "AWS/"`,
      false,
    );
    this.name = 'CloudWatchNamespaceInvalidError';
    this.namespace = namespace;
  }
}

export interface CloudWatchBatchFailedDetails {
  namespace: string;
  size: number;
  /** 1-based position of the batch and how many there were, for the message. */
  batch: number;
  batches: number;
  /** The AWS error's name (`InvalidParameterValueException`, `InternalServiceFault`, `TimeoutError`, ...). */
  awsErrorName: string;
  httpStatus: number | undefined;
}

/** One PutMetricData request failed (after the SDK's own retries); its datums were not stored. */
export class CloudWatchBatchFailedError extends CloudWatchError {
  readonly namespace: string;
  readonly size: number;
  readonly awsErrorName: string;
  readonly httpStatus: number | undefined;

  constructor(
    details: CloudWatchBatchFailedDetails,
    message: string,
    retryable: boolean,
    options?: { cause?: unknown },
  ) {
    const status = details.httpStatus === undefined ? '' : ` (HTTP ${details.httpStatus})`;
    super(
      `PutMetricData batch ${details.batch} of ${details.batches} (${details.size} datums, namespace ${details.namespace}) failed: ` +
        `${details.awsErrorName}${status}: ${message}`,
      retryable,
      options,
    );
    this.name = 'CloudWatchBatchFailedError';
    this.namespace = details.namespace;
    this.size = details.size;
    this.awsErrorName = details.awsErrorName;
    this.httpStatus = details.httpStatus;
  }
}

/** The caller's AbortSignal fired before the batch was sent. Not retryable within this run. */
export class CloudWatchPublishAbortedError extends CloudWatchError {
  constructor(size: number, options?: { cause?: unknown }) {
    super(`PutMetricData batch of ${size} datums was not sent: the publish was aborted by the caller`, false, options);
    this.name = 'CloudWatchPublishAbortedError';
  }
}
