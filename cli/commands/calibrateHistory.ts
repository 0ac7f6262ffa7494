import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { renderChartSvg, renderSummaryText } from '../../shared/calibration/index.js';
import type { CalibrationHistoryStore, HistoryRecord } from '../../shared/calibration/history/index.js';
import { defaultReportPrefix, REPORT_FILES } from '../../shared/calibration/workflow/index.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { twinHistoryStore, twinTarget } from '../../sim/harness/twinTarget.js';
import {
  findExecution,
  type HistoryDeployment,
  historyDeployment,
  listHistory,
  withAccountHistory,
} from '../account/history.js';
import { type AccountFlags, refuseMixedModes } from '../account/options.js';
import { CliOptionInvalidError } from '../errors.js';
import { formatNumber, table } from '../output.js';
import { positiveInteger, printJson } from '../options.js';

/**
 * `vllm-pilot calibrate list|show`: the calibration history of a deployment, from the twin's table or a deployed
 * stack's (the CalibrationHistoryTableName output), read with the user's credentials. Only reads.
 */

interface HistoryOptions extends AccountFlags {
  stateFile?: string;
  json?: boolean;
}

const ACCOUNT_EXAMPLE = [
  '  AWS_PROFILE=prod vllm-pilot calibrate list --region us-east-2 --cluster ai-eks --namespace default \\',
  '      --deployment vllm-inference-app --history-table vllm-eks-pilot-prod-CalibrationHistoryTable-1A2B3C',
];

/** Adds `list` and `show` under `calibrate`. */
export function registerCalibrationHistoryCommands(calibrate: Command): void {
  addHistoryFlags(
    calibrate
      .command('list')
      .description("list a deployment's calibrations, newest first (the twin's history, or a deployed stack's)")
      .option('--limit <n>', 'at most this many', positiveInteger, 20),
  )
    .addHelpText(
      'after',
      ['', 'Examples:', '  vllm-pilot calibrate list --state-file twin.json', ...ACCOUNT_EXAMPLE, ''].join('\n'),
    )
    .action(async (opts: HistoryOptions & { limit: number }) => {
      const records = await readHistory(opts, (history, deployment) => listHistory(history, deployment, opts.limit));
      if (opts.json) return printJson(records.map(listRow));
      if (records.length === 0) {
        process.stdout.write('no calibration recorded for this deployment\n');
        return;
      }
      process.stdout.write(
        `${table(
          ['execution', 'finished', 'strategy', 'capacity req/s', 'queue/Pod', 'p95 s', 'note'],
          records.map((record) => {
            const row = listRow(record);
            return [
              row.execution,
              row.finishedAt,
              row.strategy,
              row.capacityRps ?? '-',
              row.queueDepthPerPod ?? '-',
              row.p95LatencySeconds ?? '-',
              row.note,
            ];
          }),
        )}\n`,
      );
    });

  addHistoryFlags(
    calibrate
      .command('show')
      .description(
        'show one calibration of a deployment: its summary, thresholds and where its report is; --chart draws its chart',
      )
      .argument('<execution>', 'the execution name (see `calibrate list`)')
      .option('--chart <file>', "write the calibration's chart (SVG) to this file")
      .option(
        '--report-bucket <bucket>',
        "the stack's report bucket (its ReportBucketName output): print where the report and chart are",
      ),
  )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  vllm-pilot calibrate show calib-vllm-inference-app-20261203T071922 --state-file twin.json --chart chart.svg',
        ...ACCOUNT_EXAMPLE.map((line) =>
          line.replace('calibrate list', 'calibrate show calib-vllm-inference-app-20261203T071922'),
        ),
        '',
      ].join('\n'),
    )
    .action(async (execution: string, opts: HistoryOptions & { chart?: string; reportBucket?: string }) => {
      if (opts.reportBucket !== undefined && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(opts.reportBucket))
        throw new CliOptionInvalidError(
          '--report-bucket',
          opts.reportBucket,
          'an S3 bucket name (3-63 lowercase letters, digits, "." or "-")',
        );
      const record = await readHistory(opts, (history, deployment) => findExecution(history, deployment, execution));
      if (opts.chart !== undefined) await writeFile(opts.chart, renderChartSvg(record.report));
      if (opts.json) return printJson(record);
      const where =
        opts.reportBucket === undefined
          ? []
          : (() => {
              const prefix = defaultReportPrefix({ target: record.report.provenance }, record.executionName);
              return [
                `Report: s3://${opts.reportBucket}/${prefix}/${REPORT_FILES.report}`,
                `Chart:  s3://${opts.reportBucket}/${prefix}/${REPORT_FILES.chart}`,
              ];
            })();
      process.stdout.write(
        [
          renderSummaryText(record.report),
          ...(record.rollback === undefined
            ? []
            : [
                `Rollback: undid ${record.rollback.undid}, restored ${record.rollback.restoredFrom ?? 'the values from before it'}`,
              ]),
          ...where,
          ...(opts.chart === undefined ? [] : [`Chart written to ${opts.chart}`]),
          '',
        ].join('\n'),
      );
    });
}

/** The deployment flags, the account's region and table, and the twin's state file, on a history command. */
function addHistoryFlags(command: Command): Command {
  return command
    .option('--state-file <file>', "against the twin: the state file written by `twin up` (its deployment's history)")
    .option('--cluster <name>', 'against an account: the EKS cluster')
    .option('--namespace <namespace>', "against an account: the Deployment's namespace")
    .option('--deployment <name>', 'against an account: the vLLM Deployment')
    .option('--region <region>', "against an account: the stack's region (default: AWS_REGION)")
    .option('--history-table <table>', "against an account: the stack's CalibrationHistoryTableName (required)")
    .option('--json', 'print JSON');
}

/** Reads from the twin's history (its one deployment) or the account's, per the flags given. */
async function readHistory<T>(
  opts: HistoryOptions,
  read: (history: CalibrationHistoryStore, deployment: HistoryDeployment) => Promise<T>,
): Promise<T> {
  if (refuseMixedModes(opts.stateFile, opts) === 'account') {
    const deployment = historyDeployment(opts);
    return withAccountHistory(opts, (history) => read(history, deployment));
  }
  const state = await readTwinState(opts.stateFile as string);
  const { history, client } = twinHistoryStore(state);
  try {
    return await read(history, twinTarget(state));
  } finally {
    client.destroy();
  }
}

/** One line of `calibrate list`. */
function listRow(record: HistoryRecord) {
  const { analysis, provenance } = record.report;
  return {
    execution: record.executionName,
    finishedAt: record.finishedAt,
    strategy: provenance.strategy,
    capacityRps: analysis.capacityRps === null ? null : Number(formatNumber(analysis.capacityRps.value)),
    queueDepthPerPod: record.thresholds?.queueDepthPerPod.value ?? null,
    p95LatencySeconds: record.thresholds?.p95LatencySeconds.value ?? null,
    note:
      record.rollback !== undefined
        ? `rollback of ${record.rollback.undid}`
        : analysis.saturation.found
          ? `saturated at ${formatNumber(analysis.saturation.rateRps)} req/s`
          : 'no saturation within the plan',
  };
}
