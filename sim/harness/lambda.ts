import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';

/**
 * Running the product's Lambda handlers outside Lambda (against the twin, in tests and benches): the context an
 * invocation gets, and the Powertools logger it logs with.
 */

/**
 * The Lambda context of `vllm-eks-pilot-<name>`, as Lambda hands it to one invocation: its remaining time counts down
 * from `remainingMs` (default 60 s) at the context's creation, as Lambda's does from the invocation's start.
 */
export function lambdaContext(name: string, options: { awsRequestId?: string; remainingMs?: number } = {}): Context {
  const functionName = `vllm-eks-pilot-${name}`;
  const deadlineMs = Date.now() + (options.remainingMs ?? 60_000);
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-2:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: options.awsRequestId ?? randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'twin',
    getRemainingTimeInMillis: () => Math.max(0, deadlineMs - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** A Powertools logger that prints nothing, or JSON lines when `verbose`. */
export function functionLogger(serviceName: string, verbose = false): Logger {
  return new Logger({ serviceName, logLevel: verbose ? 'INFO' : 'SILENT' });
}

/** The scheduled EventBridge event of the minute `timeMs` (what the per-minute functions receive). */
export function scheduledEvent(timeMs: number): Record<string, string> {
  return { 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date(timeMs).toISOString() };
}
