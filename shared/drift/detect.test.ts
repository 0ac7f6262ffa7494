import { describe, expect, it } from '@jest/globals';
import type { HistoryRecord } from '../calibration/history/index.js';
import { guideReport } from '../calibration/testing/report.js';
import { assessDrift } from './detect.js';
import type { LiveEvidence } from './evidence.js';

/** The guide's calibration (capacity 55.8 req/s per Pod, stable up to 50 req/s with p95 2.5 s there) as a record. */
const RECORD: HistoryRecord = {
  targetKey: 'prod/llm/ministral',
  finishedAt: '2025-06-02T09:10:30.000Z',
  executionName: 'guide-run',
  podTemplateHash: 'h',
  thresholds: null,
  previousThresholds: null,
  report: guideReport(),
};

function live(overrides: Partial<LiveEvidence>): LiveEvidence {
  return {
    windowSeconds: 600,
    pods: 2,
    completedPerPodRps: 30,
    queueSlopePerSecond: 0,
    queueMean: 0,
    p95E2eSeconds: 2,
    ...overrides,
  };
}

describe('Function: assessDrift', () => {
  it('finds nothing at a rate the calibration held, with a p95 like the one it measured', () => {
    // Act
    const assessment = assessDrift(RECORD, [], live({}));

    // Assess
    expect(assessment.findings).toEqual([]);
    expect(assessment.notJudged).toEqual([]);
    expect(assessment.calibration).toMatchObject({ execution: 'guide-run' });
  });

  it('names each Pod template difference as a template finding', () => {
    // Act
    const assessment = assessDrift(RECORD, ['image: a → b', '--max-num-seqs: 32 → 16'], live({}));

    // Assess
    expect(assessment.findings).toEqual([
      {
        kind: 'template',
        evidence: 'the Pod template changed since calibration guide-run: image: a → b; --max-num-seqs: 32 → 16',
      },
    ]);
  });

  it('finds a capacity drop when the queue grows below 80 % of the calibrated capacity', () => {
    // Act: 30 req/s per Pod (54 % of 55.8), the queue growing 3 req/s with 20 waiting on average.
    const assessment = assessDrift(RECORD, [], live({ queueSlopePerSecond: 3, queueMean: 20, p95E2eSeconds: 2.4 }));

    // Assess
    expect(assessment.findings.map((f) => f.kind)).toEqual(['capacity']);
    expect(assessment.findings[0]?.evidence).toMatch(
      /^the queue grew 3 req\/s \(mean 20 waiting\) over the last 600 s while each of 2 Pod\(s\) completed 30 req\/s, below 80 % of the calibrated capacity \(55\.\d+ req\/s per Pod\)/,
    );
  });

  it('does not call a growing queue at the calibrated capacity a drift (that is load, not drift)', () => {
    // Act
    const assessment = assessDrift(
      RECORD,
      [],
      live({ completedPerPodRps: 50, queueSlopePerSecond: 3, queueMean: 20, p95E2eSeconds: 2.5 }),
    );

    // Assess
    expect(assessment.findings).toEqual([]);
  });

  it('finds a latency drift when the p95 is above 1.5 × the calibrated p95 at a rate at least as high', () => {
    // Act: at 30 req/s per Pod the reference is the 30 req/s step of the guide's run.
    const assessment = assessDrift(RECORD, [], live({ p95E2eSeconds: 9 }));

    // Assess
    expect(assessment.findings.map((f) => f.kind)).toEqual(['latency']);
    expect(assessment.findings[0]?.evidence).toMatch(/^p95 9 s over the last 600 s at 30 req\/s per Pod, above 1\.5 ×/);
  });

  it.each([
    { case: 'no calibration', record: undefined, evidence: live({}), note: /^no calibration of this target/ },
    {
      case: 'too little traffic',
      record: RECORD,
      evidence: live({ completedPerPodRps: 2 }),
      note: /^too little traffic to judge the capacity: 2 req\/s per Pod over the last 600 s, below 10 %/,
    },
    {
      case: 'a rate above every stable step',
      record: RECORD,
      evidence: live({ completedPerPodRps: 54 }),
      note: /^no stable calibration step at 54 req\/s per Pod or above/,
    },
  ])('judges nothing it cannot: $case', ({ record, evidence, note }) => {
    // Act
    const assessment = assessDrift(record, [], evidence);

    // Assess
    expect(assessment.findings).toEqual([]);
    expect(assessment.notJudged).toEqual([expect.stringMatching(note)]);
  });
});
