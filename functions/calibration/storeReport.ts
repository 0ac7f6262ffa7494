import * as z from 'zod';
import { renderChartSvg } from '../../shared/calibration/chart.js';
import { historyTargetKey } from '../../shared/calibration/history/historyTargetKey.js';
import { buildProvenance } from '../../shared/calibration/provenance.js';
import { buildReport, renderSummaryText } from '../../shared/calibration/report.js';
import type { CalibrationAnalysis, ThresholdChange } from '../../shared/calibration/types.js';
import { defaultReportPrefix, type CalibrationDeps } from './deps.js';
import { baseEventShape, deploymentStateSchema, parseEvent, stepsSchema } from './event.js';
import { podSelector, readDeployment } from './kube.js';

const eventSchema = z.object({
  ...baseEventShape,
  deployment: deploymentStateSchema,
  steps: stepsSchema,
  analysis: z.looseObject({ saturation: z.unknown() }).transform((a) => a as unknown as CalibrationAnalysis),
  change: z
    .looseObject({ applied: z.boolean() })
    .nullable()
    .transform((c) => c as unknown as ThresholdChange | null),
});

/** The report's file names under the execution's prefix. */
export const REPORT_FILES = { report: 'report.json', chart: 'chart.svg' } as const;

/** `$.report`: where the report went and its summary (the Notify message). */
export interface StoredReport {
  reportLocation: string;
  chartLocation: string;
  /** The history's partition key and the record's finishedAt. */
  history: { targetKey: string; finishedAt: string };
  summary: string;
}

/**
 * StoreReport: the report (provenance from the live Deployment, steps, analysis, change) as JSON and its SVG chart
 * in the ReportStore, and a record in the calibration history. `finishedAt` is the end of the last measured window,
 * so a retried StoreReport writes the same files and the same history record, not a second one.
 */
export async function storeReport(deps: CalibrationDeps, event: unknown): Promise<StoredReport> {
  const { input, execution, deployment, steps, analysis, change } = parseEvent('StoreReport', eventSchema, event);
  const cluster = await deps.cluster(input.target);
  const live = await readDeployment(cluster, deployment.namespace, deployment.name);
  // The node a measured Pod ran on names the GPU when the Pod template does not.
  const nodeName = (await cluster.listPods(deployment.namespace, podSelector(live)))
    .map((pod) => (pod.spec as { nodeName?: string } | undefined)?.nodeName)
    .find((name) => name !== undefined);
  const node =
    nodeName === undefined ? undefined : await cluster.get({ apiVersion: 'v1', kind: 'Node', name: nodeName });
  const finishedAt = new Date(Math.max(...steps.map((s) => Date.parse(s.windowEnd)).filter(Number.isFinite), 0));
  const provenance = buildProvenance({
    executionId: execution.id,
    executionName: execution.name,
    startedAt: execution.startTime,
    finishedAt: finishedAt.toISOString(),
    input,
    deployment: live,
    strategy: input.plan.strategy,
    ...(node === undefined ? {} : { node }),
  });
  const report = buildReport(provenance, steps, analysis, change);
  const prefix = (deps.reportPrefix ?? defaultReportPrefix)(input, execution.name);
  const key = (file: string) => (prefix === '' ? file : `${prefix}/${file}`);
  const stored = await deps.reports.put(
    key(REPORT_FILES.report),
    `${JSON.stringify(report, null, 2)}\n`,
    'application/json',
  );
  const chart = await deps.reports.put(key(REPORT_FILES.chart), renderChartSvg(report), 'image/svg+xml');
  const targetKey = historyTargetKey(input.target);
  await deps.history.put({
    targetKey,
    finishedAt: provenance.finishedAt,
    executionName: execution.name,
    report,
    thresholds: analysis.thresholds,
    previousThresholds: change?.previous ?? null,
    podTemplateHash: provenance.podTemplateHash,
  });
  const summary = [renderSummaryText(report), `Report: ${stored.location}`, `Chart:  ${chart.location}`].join('\n');
  deps.logger.info('report stored', { execution: execution.name, report: stored.location, chart: chart.location });
  return {
    reportLocation: stored.location,
    chartLocation: chart.location,
    history: { targetKey, finishedAt: provenance.finishedAt },
    summary,
  };
}
