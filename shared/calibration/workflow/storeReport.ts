import * as z from 'zod';
import { GITOPS_FILES, gitOpsFiles, KEDA_KINDS } from '../../keda/index.js';
import { deploymentPods, KINDS, nodeNameOf, type ClusterClient } from '../../kube/index.js';
import { renderChartSvg } from '../chart.js';
import { historyTargetKey } from '../history/index.js';
import { buildProvenance } from '../provenance.js';
import { buildReport, renderSummaryText } from '../report.js';
import type { CalibrationAnalysis, ThresholdChange } from '../types.js';
import { defaultReportPrefix, type BasePorts, type CalibrationPorts } from './ports.js';
import { baseEventShape, deploymentStateSchema, stepsSchema } from './state.js';
import type { CalibrationStep } from './step.js';
import { requireDeployment } from './target.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'reports' | 'history' | 'reportPrefix'>;
const event = z.object({
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

/** Where the git files of a change went. */
export interface GitOpsLocations {
  manifest: string;
  patch: string;
  kustomization: string;
}

/** `$.report`: where the report went and its summary (the Notify message). */
export interface StoredReport {
  reportLocation: string;
  chartLocation: string;
  /** The history's partition key and the record's finishedAt. */
  history: { targetKey: string; finishedAt: string };
  /**
   * The thresholds as git files (shared/keda/gitops.ts): the whole ScaledObject and a kustomize patch, with the
   * kustomization entry that applies it; null when no change was planned (or the ScaledObject is gone).
   */
  gitops?: GitOpsLocations | null;
  summary: string;
}

/**
 * StoreReport: the report (provenance from the live Deployment, steps, analysis, change) as JSON and its SVG chart
 * in the ReportStore, and a record in the calibration history. `finishedAt` is the end of the last measured window,
 * so a retried StoreReport writes the same files and the same history record, not a second one.
 */
export async function storeReport(
  ports: Ports,
  { input, execution, deployment, steps, analysis, change }: z.output<typeof event>,
): Promise<StoredReport> {
  const cluster = await ports.cluster(input.target);
  const live = await requireDeployment(cluster, deployment.namespace, deployment.name);
  // A shadow copy's template is production's under other labels: the provenance (and its template hash, which later
  // checks compare with the running spec) is production's, the node the copy's.
  const described =
    deployment.shadowOf === undefined
      ? live
      : await requireDeployment(cluster, deployment.namespace, deployment.shadowOf);
  // The node a measured Pod ran on names the GPU when the Pod template does not.
  const nodeName = (await deploymentPods(cluster, live)).pods.map(nodeNameOf).find((name) => name !== undefined);
  const node = nodeName === undefined ? undefined : await cluster.get({ ...KINDS.node, name: nodeName });
  const finishedAt = new Date(Math.max(...steps.map((s) => Date.parse(s.windowEnd)).filter(Number.isFinite), 0));
  const provenance = buildProvenance({
    executionId: execution.id,
    executionName: execution.name,
    startedAt: execution.startTime,
    finishedAt: finishedAt.toISOString(),
    input,
    deployment: described,
    strategy: input.plan.strategy,
    ...(node === undefined ? {} : { node }),
    ...(deployment.shadowOf === undefined ? {} : { measuredOn: deployment.name }),
  });
  const report = buildReport(provenance, steps, analysis, change);
  const prefix = (ports.reportPrefix ?? defaultReportPrefix)(input, execution.name);
  const key = (file: string) => (prefix === '' ? file : `${prefix}/${file}`);
  const stored = await ports.reports.put(
    key(REPORT_FILES.report),
    `${JSON.stringify(report, null, 2)}\n`,
    'application/json',
  );
  const chart = await ports.reports.put(key(REPORT_FILES.chart), renderChartSvg(report), 'image/svg+xml');
  const gitops = await storeGitOpsFiles(ports, cluster, change, key);
  const targetKey = historyTargetKey(input.target);
  await ports.history.put({
    targetKey,
    finishedAt: provenance.finishedAt,
    executionName: execution.name,
    report,
    thresholds: analysis.thresholds,
    previousThresholds: change?.previous ?? null,
    podTemplateHash: provenance.podTemplateHash,
  });
  const summary = [
    renderSummaryText(report),
    `Report: ${stored.location}`,
    `Chart:  ${chart.location}`,
    ...(gitops === null ? [] : [`GitOps: ${gitops.patch} (kustomize patch; the ScaledObject: ${gitops.manifest})`]),
  ].join('\n');
  ports.logger.info('report stored', { execution: execution.name, report: stored.location, chart: chart.location });
  return {
    reportLocation: stored.location,
    chartLocation: chart.location,
    history: { targetKey, finishedAt: provenance.finishedAt },
    gitops,
    summary,
  };
}

/**
 * Writes the change as git files beside the report, for teams that apply cluster changes through their own review:
 * whether or not the calibration patched the live ScaledObject (scaledObject.apply), the files hold the calibrated
 * thresholds. Null without a planned change or a ScaledObject.
 */
async function storeGitOpsFiles(
  ports: Pick<Ports, 'reports'>,
  cluster: ClusterClient,
  change: ThresholdChange | null,
  key: (file: string) => string,
): Promise<GitOpsLocations | null> {
  if (change === null) return null;
  const live = await cluster.get({ ...KEDA_KINDS.scaledObject, ...change.scaledObject });
  if (live === undefined) return null;
  const files = gitOpsFiles(live, change.next);
  const put = async (file: string, body: string) =>
    (await ports.reports.put(key(file), body, 'application/yaml')).location;
  return {
    manifest: await put(GITOPS_FILES.manifest, files.manifest),
    patch: await put(GITOPS_FILES.patch, files.patch),
    kustomization: await put(GITOPS_FILES.kustomization, files.kustomization),
  };
}

export const storeReportStep = {
  name: 'storeReport',
  label: 'StoreReport',
  placeholder: 'StoreReportFunctionArn',
  event,
  run: storeReport,
} satisfies CalibrationStep<typeof event, StoredReport, Ports>;
