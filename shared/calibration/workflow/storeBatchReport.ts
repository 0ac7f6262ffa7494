import * as z from 'zod';
import { buildBatchReport, renderBatchSummary, type BatchItemResult, type BatchStatus } from './batchReport.js';
import { defaultBatchReportPrefix, type BasePorts, type CalibrationPorts } from './ports.js';
import { executionSchema } from './state.js';
import type { CalibrationStep } from './step.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'reports' | 'batchReportPrefix'>;

const event = z.object({
  execution: executionSchema,
  batch: z.object({ maxConcurrency: z.number().int().positive() }),
  results: z
    .array(
      z.looseObject({
        index: z.number().int().min(0),
        name: z.string().min(1),
        target: z.string(),
        input: z.looseObject({}),
      }),
    )
    .transform((results) => results as unknown as BatchItemResult[]),
});

/** The combined report's file name under the execution's prefix. */
export const BATCH_REPORT_FILE = 'batch-report.json';

/** `$.batchReport`: where the combined report went, the outcome over all targets and the notification's text. */
export interface StoredBatchReport {
  reportLocation: string;
  status: BatchStatus;
  succeeded: number;
  failed: number;
  summary: string;
}

/**
 * StoreBatchReport: the combined report of a many-target execution (batchReport.ts) as JSON in the ReportStore,
 * beside which each target's own report, chart and history record were written by its child execution. Writes the
 * same file again when retried.
 */
export async function storeBatchReport(
  ports: Ports,
  { execution, batch, results }: z.output<typeof event>,
): Promise<StoredBatchReport> {
  const report = buildBatchReport(execution, batch.maxConcurrency, results);
  const prefix = (ports.batchReportPrefix ?? defaultBatchReportPrefix)(execution.name);
  const key = prefix === '' ? BATCH_REPORT_FILE : `${prefix}/${BATCH_REPORT_FILE}`;
  const stored = await ports.reports.put(key, `${JSON.stringify(report, null, 2)}\n`, 'application/json');
  const succeeded = report.targets.filter((t) => t.outcome === 'succeeded').length;
  ports.logger.info('combined report stored', {
    execution: execution.name,
    report: stored.location,
    status: report.status,
  });
  return {
    reportLocation: stored.location,
    status: report.status,
    succeeded,
    failed: report.targets.length - succeeded,
    summary: renderBatchSummary(report, stored.location),
  };
}

export const storeBatchReportStep = {
  name: 'storeBatchReport',
  label: 'StoreBatchReport',
  placeholder: 'StoreBatchReportFunctionArn',
  event,
  run: storeBatchReport,
} satisfies CalibrationStep<typeof event, StoredBatchReport, Ports>;
