import type { HistoryEvent } from '@aws-sdk/client-sfn';
import type { WorkflowEvent } from '../../sim/harness/index.js';

/**
 * An AWS Step Functions execution history read as the local runner's events, so `calibrate --aws` shows the progress
 * display of a local run (phases, each measured step, rollout and readiness, early endings) from GetExecutionHistory.
 * History names a state's kind in its event type (`TaskStateEntered`, `ChoiceStateExited`, ...) and carries input and
 * output as JSON text.
 */

/** `TaskStateEntered` → `Task`, `ChoiceStateExited` → `Choice`, ... (the ASL state types). */
const STATE_EVENT = /^(Task|Choice|Wait|Pass|Map|Parallel|Succeed|Fail)State(Entered|Exited)$/;

type StateType = 'Task' | 'Choice' | 'Wait' | 'Pass' | 'Map' | 'Parallel' | 'Succeed' | 'Fail';

export class AwsHistoryEvents {
  /** The state being run, for the failure events that do not name it (TaskFailed, LambdaFunctionFailed). */
  #current: { name: string; type: StateType; input: unknown } | undefined;

  /** The runner's event for one history event, or undefined for events the display does not show. */
  next(event: HistoryEvent): WorkflowEvent | undefined {
    const timestamp = event.timestamp?.getTime() ?? Date.now();
    const match = STATE_EVENT.exec(event.type ?? '');
    if (match !== null) {
      const type = match[1] as StateType;
      if (match[2] === 'Entered') {
        const details = event.stateEnteredEventDetails;
        this.#current = { name: details?.name ?? '', type, input: parse(details?.input) };
        return { type: 'StateEntered', timestamp, state: { ...this.#current } } as WorkflowEvent;
      }
      const details = event.stateExitedEventDetails;
      const entered = this.#current?.name === details?.name ? this.#current?.input : null;
      return {
        type: 'StateExited',
        timestamp,
        state: { name: details?.name ?? '', type, input: entered, output: parse(details?.output) },
      } as WorkflowEvent;
    }
    const failure = event.lambdaFunctionFailedEventDetails ?? event.taskFailedEventDetails;
    if ((event.type === 'LambdaFunctionFailed' || event.type === 'TaskFailed') && this.#current !== undefined)
      return {
        type: 'StateFailed',
        timestamp,
        state: { ...this.#current },
        Error: failure?.error ?? 'States.TaskFailed',
        Cause: failure?.cause ?? '',
      } as WorkflowEvent;
    return undefined;
  }
}

function parse(text: string | undefined): unknown {
  if (text === undefined || text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Step Functions truncates nothing, but a payload it could not show is shown as the text it is.
    return text;
  }
}
