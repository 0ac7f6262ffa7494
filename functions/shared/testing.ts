import { Logger, type LogItem } from '@aws-lambda-powertools/logger';

/** The real Powertools Logger, keeping what it would print (the handler tests assert on the log lines). */
export class CapturingLogger extends Logger {
  readonly lines: Array<Record<string, unknown>> = [];

  protected override printLog(_logLevel: number, log: LogItem): void {
    this.lines.push(JSON.parse(JSON.stringify(log.getAttributes())) as Record<string, unknown>);
  }
}
