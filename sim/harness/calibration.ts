import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { bindStep, bindSteps, type CalibrationTask } from '../../functions/calibration/task.js';
import type { CalibrationReport } from '../../shared/calibration/index.js';
import { DynamoDbSilenceStore } from '../../shared/alerts/silences/index.js';
import { DynamoDbHistoryStore } from '../../shared/calibration/history/index.js';
import {
  CALIBRATION_STEPS,
  cleanupEndedExecutionFunction,
  rollbackFunction,
  type RollbackResult,
  executionFailure,
  sweepLeases,
  type CalibrationPorts,
  type EndedExecutionCleanup,
  type StoredBatchReport,
  type StoredReport,
  type SweepDecision,
  type BatchReport,
} from '../../shared/calibration/workflow/index.js';
import { systemClock } from '../../shared/clock/index.js';
import { ClusterConnections } from '../../shared/kube/connection/index.js';
import { silentLogger } from '../../shared/log/index.js';
import { HttpMetricsSource } from '../../shared/metrics/index.js';
import {
  handlersByResource,
  loadDefinition,
  localExecutionStatus,
  localFunctionArns,
  runStateMachineLocally,
  SNS_PUBLISH_RESOURCE,
  START_EXECUTION_SYNC_RESOURCE,
  startExecutionSyncHandler,
  taskStates,
  snsPublishHandler,
  type AslDefinition,
  type LocalRun,
  type LocalTaskHandler,
  type RunLocallyOptions,
  type WorkflowOutcome,
} from '../stepfunctions/index.js';
import type { TwinState } from '../twin/stateFile.js';
import { LocalFolderReportStore } from './localFolderReportStore.js';
import { TWIN_CREDENTIALS, TWIN_RESOURCES } from '../twin/constants.js';
import type { TwinCredentials } from './twinTarget.js';
import type { ExecutionEnd, StepFunctionsTwin } from '../aws/stepFunctions.js';

/**
 * The calibration state machine on the twin: the real ASL file run by the local Step Functions runner, each Task
 * state calling the same bound step its Lambda runs (functions/calibration/task.ts), with the twin's endpoints as
 * the ports (its EKS and API server, Prometheus as AMP, DynamoDB, SNS) and a local folder as the report bucket.
 */

export interface TwinCalibrationOptions {
  /** The execution input, as the execution gets it (withTwinTarget fills in the twin's target). */
  input: Record<string, unknown>;
  executionName: string;
  /** Where the report and chart go. */
  reportsDir: string;
  /** The key prefix under reportsDir; default none (the folder is the run's). */
  reportPrefix?: CalibrationPorts['reportPrefix'];
  logger?: CalibrationPorts['logger'];
  /** Ports to use instead of the twin's (tests inject faults with them). */
  ports?: Partial<CalibrationPorts>;
  /** Changes the state → handler table before the run, given the ports (tests inject faults with it). */
  handlers?: (table: Record<string, LocalTaskHandler>, ports: CalibrationPorts) => Record<string, LocalTaskHandler>;
  onEvent?: RunLocallyOptions['onEvent'];
  /**
   * Many targets: every event of each child execution (one per target, named `<execution>-t<n>`); `onEvent` gets only
   * the parent's own.
   */
  onChildEvent?: (child: string, event: Parameters<NonNullable<RunLocallyOptions['onEvent']>>[0]) => void;
  /** Poll Waits and rests shortened by this factor (tests); the holds are never shortened. */
  waitScale?: number;
  /** The pause before every retry, instead of the definition's backoff (tests). */
  retryIntervalMs?: number;
  /** The execution's timeout instead of the definition's TimeoutSeconds (tests of a timed-out execution). */
  timeoutSeconds?: number;
  /**
   * The keys the calibration functions sign with: TWIN_IDENTITIES.calibration for their own identity (the RBAC of
   * the calibration group: writes in the target's namespace only); default the operator's (cluster admin).
   */
  credentials?: TwinCredentials;
}

/** A calibration started on the twin: the local run, its ports, and what to close when it is over. */
export interface TwinCalibration {
  run: LocalRun;
  /** The ports the steps use (the progress display reads the metrics source). */
  ports: CalibrationPorts;
  /** Closes the clients' sockets; call once the run is over. */
  close: () => void;
}

/** The twin's target under what the input gives (the input wins), so a twin input may hold only the plan. */
export function withTwinTarget(raw: Record<string, unknown>, state: TwinState): Record<string, unknown> {
  const given = (raw.target ?? {}) as Record<string, unknown>;
  return {
    ...raw,
    target: {
      cluster: state.clusterName,
      region: state.region,
      namespace: state.namespace,
      deployment: state.deployment,
      model: state.model,
      ampWorkspaceUrl: state.prometheusUrl,
      ...given,
    },
  };
}

/** The calibration's ports on the twin, and the SNS client its Notify states publish with. */
export interface TwinCalibrationPorts {
  ports: CalibrationPorts;
  sns: SNSClient;
  /** Closes the clients' sockets. */
  close: () => void;
}

/**
 * The calibration's ports on the twin: its EKS endpoint and API server (through the product's own EKS connection),
 * its Prometheus as AMP, its DynamoDB for the history, a local folder for the reports; `ports` replaces any of them.
 */
export function twinCalibrationPorts(
  state: TwinState,
  options: Pick<TwinCalibrationOptions, 'reportsDir' | 'reportPrefix' | 'logger' | 'ports' | 'credentials'>,
): TwinCalibrationPorts {
  const aws = state.aws;
  const credentials = options.credentials ?? TWIN_CREDENTIALS;
  const sns = new SNSClient({ region: state.region, endpoint: aws.snsEndpoint, credentials });
  const dynamodb = new DynamoDBClient({ region: state.region, endpoint: aws.dynamodbEndpoint, credentials });
  const clusters = new ClusterConnections({ eksEndpoint: aws.eksEndpoint, credentials });
  const ports: CalibrationPorts = {
    cluster: (target) => clusters.get(target.region, target.cluster),
    metricsSource: (target) =>
      new HttpMetricsSource({ endpoint: target.ampWorkspaceUrl, region: target.region, credentials }),
    reports: new LocalFolderReportStore({ directory: options.reportsDir }),
    reportPrefix: options.reportPrefix ?? (() => ''),
    // The run's folder is the combined report's; each target's child writes into a folder of its own inside it.
    batchReportPrefix: () => '',
    history: new DynamoDbHistoryStore({ client: dynamodb, tableName: aws.historyTable }),
    ...(aws.alertSilencesTable === undefined
      ? {}
      : { silences: new DynamoDbSilenceStore({ client: dynamodb, tableName: aws.alertSilencesTable }) }),
    clock: systemClock,
    logger: options.logger ?? silentLogger,
    ...options.ports,
  };
  return {
    ports,
    sns,
    close: () => {
      sns.destroy();
      dynamodb.destroy();
      clusters.destroy();
    },
  };
}

/** Starts the calibration state machine on the twin. The input goes to the execution as given: ValidateInput judges it. */
export async function startTwinCalibration(
  state: TwinState,
  options: TwinCalibrationOptions,
): Promise<TwinCalibration> {
  const loaded = await loadDefinition();
  const definition =
    options.timeoutSeconds === undefined ? loaded : { ...loaded, TimeoutSeconds: options.timeoutSeconds };
  const { ports, sns, close } = twinCalibrationPorts(state, options);
  // Many targets: each target is a child execution of this same machine, on the same twin, handlers and options, its
  // report in a folder of its own; stopping the parent stops the children, as Step Functions does with .sync.
  const children = new Set<LocalRun>();
  const startChild = startExecutionSyncHandler(async ({ stateMachineArn, name, input }) => {
    if (stateMachineArn !== run.stateMachineArn)
      throw Object.assign(new Error(`State Machine Does Not Exist: '${stateMachineArn}'`), {
        name: 'StepFunctions.StateMachineDoesNotExistException',
      });
    const { onEvent: _parentsOwn, onChildEvent, ...shared } = options;
    const child = await startTwinCalibration(state, {
      ...shared,
      input: input as Record<string, unknown>,
      executionName: name,
      reportsDir: join(options.reportsDir, name),
      ...(onChildEvent === undefined ? {} : { onEvent: (event) => onChildEvent(name, event) }),
    });
    children.add(child.run);
    try {
      return { executionArn: child.run.executionArn, outcome: await child.run.result };
    } finally {
      children.delete(child.run);
      child.close();
    }
  });
  const table = calibrationLocalHandlers(definition, bindSteps(CALIBRATION_STEPS, ports), sns, startChild);
  // The stack's EventBridge rule on the machine's ABORTED, TIMED_OUT and FAILED executions, locally: the runner
  // delivers the same event to the same function once the execution ended.
  const onEnded = bindStep(cleanupEndedExecutionFunction, ports);
  const run = runStateMachineLocally({
    definition,
    handlers: options.handlers ? options.handlers(table, ports) : table,
    input: options.input,
    substitutions: {
      ...localFunctionArns(definition, { region: state.region }),
      CalibrationTopicArn: state.aws.calibrationTopicArn,
    },
    executionName: options.executionName,
    region: state.region,
    onStatusChange: (event) => onEnded(event),
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    ...(options.waitScale === undefined ? {} : { waitScale: options.waitScale }),
    ...(options.retryIntervalMs === undefined
      ? {}
      : {
          retryIntervalOverrides: Object.fromEntries(
            taskStates(definition).map(({ name }) => [name, options.retryIntervalMs as number]),
          ),
        }),
  });
  const stopping: LocalRun = {
    ...run,
    abort: () => {
      for (const child of children) child.abort();
      run.abort();
    },
  };
  return { run: stopping, ports, close };
}

/**
 * Serves the twin's calibration state machine behind its Step Functions API: each StartExecution (the product's
 * client-sfn, as on AWS) runs the real ASL file with the real handlers on the twin, its input as given (the product
 * names the target in it, as on AWS).
 */
export function serveTwinCalibrations(
  twin: { state: TwinState; stepFunctions: Pick<StepFunctionsTwin, 'setStateMachine'> },
  options: Pick<TwinCalibrationOptions, 'reportsDir' | 'waitScale' | 'retryIntervalMs' | 'logger'>,
): void {
  twin.stepFunctions.setStateMachine(TWIN_RESOURCES.calibrationStateMachine, async ({ name, input }) => {
    const calibration = await startTwinCalibration(twin.state, {
      ...options,
      input: JSON.parse(input) as Record<string, unknown>,
      executionName: name,
    });
    try {
      return executionEnd(await calibration.run.result);
    } finally {
      calibration.close();
    }
  });
}

/** A local run's outcome as Step Functions reports an execution's end. */
function executionEnd(outcome: WorkflowOutcome): ExecutionEnd {
  switch (outcome.status) {
    case 'succeeded':
      return { status: 'SUCCEEDED', output: JSON.stringify(outcome.output) };
    case 'failed':
      return { status: 'FAILED', error: outcome.error, cause: outcome.cause };
    case 'timedOut':
      return { status: 'TIMED_OUT', error: outcome.error, cause: outcome.cause };
    case 'aborted':
      return { status: 'ABORTED' };
  }
}

/** A calibration on the twin that ended as it should, with its stored report. */
export interface TwinCalibrationResult {
  report: CalibrationReport;
  stored: StoredReport;
}

/**
 * Runs the calibration on the twin to its end, the twin's target filling in what the input leaves out. A run that
 * did not succeed throws an error named as the execution's (`CalibrationJobFailedError`, `ExecutionAborted`, ...)
 * whose message is the first line of its cause.
 */
export async function calibrateOnTwin(
  state: TwinState,
  options: TwinCalibrationOptions,
): Promise<TwinCalibrationResult> {
  const calibration = await startTwinCalibration(state, { ...options, input: withTwinTarget(options.input, state) });
  let outcome: WorkflowOutcome;
  try {
    outcome = await calibration.run.result;
  } finally {
    calibration.close();
  }
  return readOutcome(outcome);
}

/** The report of a succeeded run, or the run's failure as the one-line named error the CLI prints. */
export async function readOutcome(outcome: WorkflowOutcome): Promise<TwinCalibrationResult> {
  if (outcome.status === 'aborted')
    throw executionFailure('ExecutionAborted', `stopped (Ctrl-C); ${afterEndText(outcome.afterEnd)}`);
  if (outcome.status !== 'succeeded') throw executionFailure(outcome.error, outcome.cause);
  const stored = (outcome.output as { report?: StoredReport }).report;
  if (stored === undefined) throw executionFailure('CalibrationError', 'the execution ended without a report');
  const report = JSON.parse(await readFile(stored.reportLocation, 'utf8')) as CalibrationReport;
  return { report, stored };
}

/** A many-target calibration on the twin that ended as it should, with its combined report. */
export interface TwinBatchResult {
  report: BatchReport;
  stored: StoredBatchReport;
}

/**
 * The combined report of a many-target run that reached its end (some targets may have failed: the report says
 * which), or the run's own failure (a refused list, ...) as the one-line named error the CLI prints.
 */
export async function readBatchOutcome(outcome: WorkflowOutcome): Promise<TwinBatchResult> {
  if (outcome.status === 'aborted')
    throw executionFailure('ExecutionAborted', `stopped (Ctrl-C); ${afterEndText(outcome.afterEnd)}`);
  if (outcome.status !== 'succeeded') throw executionFailure(outcome.error, outcome.cause);
  const stored = (outcome.output as { batchReport?: StoredBatchReport }).batchReport;
  if (stored === undefined) throw executionFailure('CalibrationError', 'the execution ended without a combined report');
  const report = JSON.parse(await readFile(stored.reportLocation, 'utf8')) as BatchReport;
  return { report, stored };
}

/**
 * The local runner's table (state name → handler) for the calibration definition: each Lambda Task state gets the
 * bound step its `${...FunctionArn}` names, the SNS Notify states publish through `sns` (the twin's endpoint), so
 * a local run sends the same messages as AWS, and a many-target execution's children start through `startChild`.
 */
export function calibrationLocalHandlers(
  definition: AslDefinition,
  tasks: Readonly<Record<keyof typeof CALIBRATION_STEPS, CalibrationTask>>,
  sns: SNSClient,
  startChild: LocalTaskHandler,
): Record<string, LocalTaskHandler> {
  const byResource: Record<string, LocalTaskHandler> = {
    [SNS_PUBLISH_RESOURCE]: snsPublishHandler(sns),
    [START_EXECUTION_SYNC_RESOURCE]: startChild,
  };
  for (const [name, step] of Object.entries(CALIBRATION_STEPS))
    byResource[step.placeholder] = tasks[name as keyof typeof CALIBRATION_STEPS];
  return handlersByResource(definition, byResource);
}

/** What the ended-execution cleanup did, in one clause for the error line. */
function afterEndText(afterEnd: WorkflowOutcome['afterEnd']): string {
  if (afterEnd === undefined) return 'no cleanup ran';
  if ('error' in afterEnd)
    return `the cleanup failed (${afterEnd.error}: ${afterEnd.message}); the lease sweep retries it`;
  const ended = afterEnd.result as EndedExecutionCleanup;
  if ('skipped' in ended) return `nothing cleaned up: ${ended.skipped}`;
  const c = ended.cleanup;
  const parts = [
    ...(c.deletedShadow === undefined
      ? [
          c.scaledObject === null ? 'no ScaledObject to resume' : 'KEDA back in charge',
          c.replicasRestored === null ? c.replicasReason : `replicas back to ${c.replicasRestored}`,
        ]
      : [`shadow copy deleted (${c.deletedShadow.join(', ')})`]),
    `${c.deletedJobs.length} Job(s) and ${c.deletedConfigMaps.length} ConfigMap(s) deleted`,
    ...(c.alertsUnmuted === true ? ['alerts unmuted'] : []),
  ];
  return `cleaned up: ${parts.join(', ')}`;
}

/**
 * The stack's scheduled lease sweep against the twin (shared/calibration/workflow/sweepLeases.ts): the twin's
 * target, the local runner answering whether an execution still runs.
 */
export async function sweepTwinLeases(
  state: TwinState,
  options: Pick<TwinCalibrationOptions, 'logger'> & { clock?: CalibrationPorts['clock'] } = {},
): Promise<SweepDecision[]> {
  // The calibration's own twin ports (cluster, silences), as the stack's sweep shares the calibration's adapters.
  const { ports, close } = twinCalibrationPorts(state, {
    reportsDir: '/nonexistent',
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  try {
    return await sweepLeases(
      {
        cluster: (target) => ports.cluster(target),
        ...(ports.silences === undefined ? {} : { silences: ports.silences }),
        executions: { status: (arn) => Promise.resolve(localExecutionStatus(arn)) },
        clock: options.clock ?? systemClock,
        logger: ports.logger,
      },
      [
        {
          name: state.deployment,
          cluster: state.clusterName,
          region: state.region,
          namespace: state.namespace,
          deployment: state.deployment,
        },
      ],
    );
  } finally {
    close();
  }
}

/**
 * The rollback Lambda's code against the twin (shared/calibration/workflow/rollback.ts): the twin's target, its API
 * server and its history table. Throws the rollback's named errors (CalibrationRollbackConflictError, ...).
 */
export async function rollbackOnTwin(
  state: TwinState,
  options: { execution?: string; dryRun?: boolean; logger?: CalibrationPorts['logger'] } = {},
): Promise<RollbackResult> {
  const { ports, close } = twinCalibrationPorts(state, {
    reportsDir: '/nonexistent',
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  try {
    const run = bindStep(rollbackFunction, ports);
    return (await run({
      target: {
        cluster: state.clusterName,
        region: state.region,
        namespace: state.namespace,
        deployment: state.deployment,
      },
      ...(options.execution === undefined ? {} : { execution: options.execution }),
      dryRun: options.dryRun ?? false,
    })) as RollbackResult;
  } finally {
    close();
  }
}
