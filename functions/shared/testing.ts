import { Logger, type LogItem } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';

/** For the handler tests: the Lambda context of `vllm-eks-pilot-<name>`, as Lambda hands it to an invocation. */
export function lambdaTestContext(
  name: string,
  options: { awsRequestId?: string; remainingMs?: number } = {},
): Context {
  const functionName = `vllm-eks-pilot-${name}`;
  const remainingMs = options.remainingMs ?? 60_000;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-2:123456789012:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: options.awsRequestId ?? 'c6af9ac6-7b61-11e6-9a41-93e812345678',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2025/06/01/[$LATEST]2f6e0c1b',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The real Powertools Logger, keeping what it would print (the handler tests assert on the log lines). */
export class CapturingLogger extends Logger {
  readonly lines: Array<Record<string, unknown>> = [];

  protected override printLog(_logLevel: number, log: LogItem): void {
    this.lines.push(JSON.parse(JSON.stringify(log.getAttributes())) as Record<string, unknown>);
  }
}
