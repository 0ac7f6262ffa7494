import { ListExecutionsCommand, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { CalibrationExecutions } from './act.js';

/** How many of the state machine's newest executions are searched for a target's drift re-calibrations. */
const LIST_LIMIT = 100;

/** The calibration state machine's executions through @aws-sdk/client-sfn (states:ListExecutions, StartExecution). */
export class SfnCalibrationExecutions implements CalibrationExecutions {
  constructor(
    private readonly client: SFNClient,
    private readonly stateMachineArn: string,
  ) {}

  async list(prefix: string): Promise<Array<{ name: string; status: string; startMs: number }>> {
    const answer = await this.client.send(
      new ListExecutionsCommand({ stateMachineArn: this.stateMachineArn, maxResults: LIST_LIMIT }),
    );
    return (answer.executions ?? [])
      .filter((e) => e.name?.startsWith(prefix) === true)
      .map((e) => ({ name: e.name ?? '', status: e.status ?? 'UNKNOWN', startMs: e.startDate?.getTime() ?? 0 }))
      .sort((a, b) => b.startMs - a.startMs);
  }

  async start(name: string, input: Record<string, unknown>): Promise<string> {
    const answer = await this.client.send(
      new StartExecutionCommand({ stateMachineArn: this.stateMachineArn, name, input: JSON.stringify(input) }),
    );
    return answer.executionArn ?? '';
  }
}
