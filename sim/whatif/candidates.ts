import * as z from 'zod';
import type { Thresholds } from '../../shared/calibration/index.js';
import { formatKedaThresholds, scaledObject } from '../../shared/keda/index.js';
import { candidateFromScaledObject, type Candidate } from './candidate.js';
import { WhatIfCandidateInvalidError } from './errors.js';

/**
 * Where candidates come from besides a manifest file: the product's own ScaledObject generator, with the AWS
 * guide's defaults or with a calibration report's thresholds. The replay never queries, so the server address is a
 * placeholder and authentication is off (neither changes what KEDA decides).
 */

const PLACEHOLDER = { ampWorkspaceUrl: 'http://prometheus.invalid:9090', authentication: false } as const;

/**
 * The guide's ScaledObject: queue 25 per Pod, p95 5 s, 1-5 replicas, its HPA behavior, and its latency trigger in
 * the guide's AverageValue form (ADR 0019: that form asks for ceil(p95 / 5 s) Pods however many run).
 */
export function guideCandidate(model: string): Candidate {
  return candidateFromScaledObject('guide', scaledObject({ model, ...PLACEHOLDER, latencyMetricType: 'AverageValue' }));
}

const derivedNumber = z.object({
  value: z.number({ error: 'must be a number' }),
  reason: z.string(),
  formula: z.string(),
});
const shapeSchema = z.object({ promptTokens: z.number(), maxTokens: z.number() });
const reportSchema = z.object({
  provenance: z.object({ requestShape: shapeSchema.optional() }).optional(),
  analysis: z.object({
    thresholds: z.object(
      {
        queueDepthPerPod: derivedNumber,
        queueActivation: derivedNumber,
        p95LatencySeconds: derivedNumber,
        scaleIn: z.object({
          value: z.object({ queueDepth: z.literal(0), p95BelowSeconds: z.number(), forSeconds: z.number() }),
          reason: z.string(),
          formula: z.string(),
        }),
      },
      { error: 'missing or null (a calibration that found no thresholds)' },
    ),
  }),
});

/** A calibration report's thresholds in the product's ScaledObject (see thresholdsCandidate). */
export function reportCandidate(label: string, model: string, report: unknown): Candidate {
  const parsed = reportSchema.safeParse(report);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue === undefined ? 'analysis.thresholds' : issue.path.join('.');
    throw new WhatIfCandidateInvalidError(
      label,
      field || 'the report',
      issue?.message ?? 'invalid',
      'a calibration report JSON (the report.json a calibration writes) with thresholds',
    );
  }
  return thresholdsCandidate(label, model, parsed.data.analysis.thresholds, parsed.data.provenance?.requestShape);
}

/**
 * Calibrated thresholds in the product's ScaledObject, as `calibrate` writes them (formatKedaThresholds: integers for
 * the queue, the latency to 0.1 s, metricType Value); everything else the guide's.
 */
export function thresholdsCandidate(
  label: string,
  model: string,
  thresholds: Thresholds,
  calibratedShape?: Candidate['calibratedShape'],
): Candidate {
  let next: ReturnType<typeof formatKedaThresholds>;
  try {
    next = formatKedaThresholds(thresholds);
  } catch (error) {
    const e = error as Error & { field?: string };
    throw new WhatIfCandidateInvalidError(
      label,
      `analysis.${e.field ?? 'thresholds'}`,
      e.message,
      'thresholds KEDA can hold (a queue >= 1, a latency >= 0.1 s)',
      { cause: error },
    );
  }
  const candidate = candidateFromScaledObject(
    label,
    scaledObject({
      model,
      ...PLACEHOLDER,
      queueThreshold: Number(next.queueDepthPerPod),
      queueActivationThreshold: Number(next.queueActivation),
      latencyThresholdSeconds: Number(next.p95LatencySeconds),
    }),
  );
  return calibratedShape === undefined ? candidate : { ...candidate, calibratedShape: { ...calibratedShape } };
}
