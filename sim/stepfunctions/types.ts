import type { StateMachine } from 'aws-local-stepfunctions';
import type { Clock } from '../../shared/clock/index.js';

/** A parsed Amazon States Language definition (JSONPath), as read from statemachines/*.asl.json. */
export interface AslDefinition {
  StartAt: string;
  States: Record<string, AslState>;
  Comment?: string;
  TimeoutSeconds?: number;
  [field: string]: unknown;
}

/** One state of a definition: only the fields the runner looks at are typed. */
export interface AslState {
  Type: string;
  Resource?: string;
  ResultPath?: string | null;
  Seconds?: number;
  SecondsPath?: string;
  /** Parallel branches and Map item processors hold nested definitions. */
  Branches?: AslDefinition[];
  Iterator?: AslDefinition;
  ItemProcessor?: AslDefinition;
  [field: string]: unknown;
}

/** What a Task state runs locally: the state's effective input (after InputPath/Parameters) to its raw result. */
export type LocalTaskHandler = (input: unknown) => Promise<unknown>;

/** The events aws-local-stepfunctions reports (StateEntered, StateExited, StateRetried, ExecutionFailed, ...). */
export type WorkflowEvent = ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer E> ? E : never;

export interface RunLocallyOptions {
  /** The parsed definition, with its `${...}` placeholders (the same file the AWS stack deploys). */
  definition: AslDefinition;
  /** One handler per Task state, by state name; the run is refused when one is missing. */
  handlers: Readonly<Record<string, LocalTaskHandler>>;
  /** The execution input. */
  input: unknown;
  /** Values for the definition's `${Name}` placeholders (DefinitionSubstitutions). */
  substitutions: Readonly<Record<string, string>>;
  /** The execution name ($$.Execution.Name); it also makes the execution ARN. */
  executionName: string;
  /** The state machine's name in the execution ARN. Default `vllm-pilot-calibration`. */
  stateMachineName?: string;
  /** Region and account in the execution ARN. Default the twin's `us-east-2` and `000000000000`. */
  region?: string;
  accountId?: string;
  /** Stamps the outcome's start and end. Default: the system clock. */
  clock?: Clock;
  /**
   * Multiplies the duration of every Wait state except `fixedWaits` (0 to 1: polls and rests run sooner). The load
   * itself is never shortened: the hold Wait is fixed and the load Job runs for its own duration anyway.
   */
  waitScale?: number;
  /** Wait states `waitScale` never touches. Default `['HoldStep']`. */
  fixedWaits?: readonly string[];
  /** Milliseconds before each retry, by state name (aws-local-stepfunctions' retryIntervalOverrides). */
  retryIntervalOverrides?: Readonly<Record<string, number | number[]>>;
  /** Called with every event as it happens (state entered/exited/retried/caught, execution finished). */
  onEvent?: (event: WorkflowEvent) => void;
  /**
   * Called once the execution ended, with the EventBridge "Step Functions Execution Status Change" event AWS would
   * emit (what the stack's rule on ABORTED, TIMED_OUT and FAILED delivers). `result` settles after it returned; what
   * it returns (or throws) is the outcome's `afterEnd`.
   */
  onStatusChange?: (event: Record<string, unknown>) => Promise<unknown>;
}

/** What `onStatusChange` returned, or the error it threw (its name and first line). */
export type AfterEnd = { result: unknown } | { error: string; message: string };

/** How a local execution ended. A Fail state's `error` and `cause` are the ones the Fail state chose. */
export type WorkflowOutcome = (
  | { status: 'succeeded'; output: unknown; startedAt: string; finishedAt: string }
  | { status: 'failed'; error: string; cause: string; startedAt: string; finishedAt: string }
  | { status: 'timedOut'; error: 'States.Timeout'; cause: string; startedAt: string; finishedAt: string }
  | { status: 'aborted'; startedAt: string; finishedAt: string }
) & { afterEnd?: AfterEnd };

export interface LocalRun {
  /** Settles once the execution has ended and every event was delivered; never rejects for a failed execution. */
  result: Promise<WorkflowOutcome>;
  /** Every event so far, in order (grows while the execution runs). */
  events: WorkflowEvent[];
  executionArn: string;
  /** The ARN of the state machine it runs ($$.StateMachine.Id): a child execution of the same machine names it. */
  stateMachineArn: string;
  /** Stops the execution after the state that is running now. */
  abort(): void;
}
