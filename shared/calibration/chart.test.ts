import { describe, expect, it } from '@jest/globals';
import { niceScale, renderChartSvg } from './chart.js';
import { guideReport } from './testing/report.js';
import { GUIDE_STEP_SPECS, buildSteps, testInput } from './testing/steps.js';
import type { StepMeasurement } from './types.js';
import { XmlNotWellFormedError, allElements, parseXml, type XmlElement } from './testing/xml.js';

function byId(root: XmlElement, id: string): XmlElement | undefined {
  return allElements(root).find((e) => e.attributes.id === id);
}

function texts(root: XmlElement): string[] {
  return allElements(root)
    .filter((e) => e.name === 'text')
    .map((e) => e.text);
}

describe('Function: renderChartSvg', () => {
  it("draws the guide's run: both curves with a point per step, the knee, the last stable rate and the thresholds", () => {
    // Act
    const svg = parseXml(renderChartSvg(guideReport()));

    // Assess
    expect(svg.name).toBe('svg');
    expect(svg.attributes.xmlns).toBe('http://www.w3.org/2000/svg');
    const queue = byId(svg, 'queue-mean');
    const p95 = byId(svg, 'p95');
    expect(queue?.name).toBe('polyline');
    expect(p95?.name).toBe('polyline');
    expect(queue?.attributes.points?.split(' ')).toHaveLength(6);
    expect(p95?.attributes.points?.split(' ')).toHaveLength(6);
    expect(allElements(svg).filter((e) => e.name === 'circle')).toHaveLength(18);
    // The knee sits at 60 req/s: the x of the sixth point of the curves.
    const knee = byId(svg, 'knee');
    const sixthX = queue?.attributes.points?.split(' ')[5]?.split(',')[0];
    expect(knee?.attributes.x1).toBe(sixthX);
    expect(knee?.attributes.x2).toBe(sixthX);
    expect(byId(svg, 'last-stable')).toBeDefined();
    expect(byId(svg, 'queue-threshold')).toBeDefined();
    expect(byId(svg, 'p95-guardrail')).toBeDefined();
    expect(texts(svg)).toEqual(
      expect.arrayContaining([
        'Calibration of mistralai/Ministral-3-8B-Instruct-2512 — 2025-06-02',
        'saturation 60 req/s',
        'last stable 50 req/s',
        'queue threshold 25 per Pod',
        'p95 guardrail 5 s',
        'scale in below 3 s',
        'offered rate (req/s)',
      ]),
    );
  });

  it('draws a step whose evidence failed as a grey cross off the curves, with its reasons and a legend entry', () => {
    // Prepare: the guide's run, where the first try at 20 req/s failed its checks (a Prometheus paused across its end:
    // a queue and a p95 that were not the replica's) and was repeated; the analysis used only the repeat.
    const input = testInput();
    const [first, ...rest] = GUIDE_STEP_SPECS;
    const specs = [first!, { rateRps: 20, amp: { queueMean: 40, queueMax: 90, p95E2eSeconds: 9.5 } }, ...rest];
    const reason = 'a gap of 9 s in the samples of Pod vllm-a';
    const steps = buildSteps(specs, input).map((step) =>
      step.index === 1
        ? { ...step, evidence: { ok: false, reasons: [reason], attempt: 1 } }
        : { ...step, evidence: { ok: true, reasons: [], attempt: step.index === 2 ? 2 : 1 } },
    ) as StepMeasurement[];

    // Act
    const svg = parseXml(renderChartSvg(guideReport({ input, steps })));

    // Assess: the curves and their points are the six steps the analysis used, as without the failed try.
    const queue = byId(svg, 'queue-mean')?.attributes.points?.split(' ') ?? [];
    expect(queue).toHaveLength(6);
    expect(byId(svg, 'p95')?.attributes.points?.split(' ')).toHaveLength(6);
    expect(allElements(svg).filter((e) => e.name === 'circle')).toHaveLength(18);
    // One cross at its queue mean, one at its p95, both at 20 req/s (the x of the curves' second point).
    const group = byId(svg, 'repeated-steps');
    const crosses = allElements(group!).filter((e) => e.name === 'path');
    expect(crosses).toHaveLength(2);
    const [x20] = (queue[1] ?? '').split(',').map(Number);
    for (const cross of crosses) {
      const [mx] =
        /^M([\d.]+),/
          .exec(cross.attributes.d ?? '')
          ?.slice(1)
          .map(Number) ?? [];
      expect((mx ?? 0) + 4).toBeCloseTo(x20!, 1);
      expect(cross.attributes.stroke).toBe('#8c8c8c');
    }
    expect(allElements(group!).find((e) => e.name === 'title')?.text).toBe(
      `step 2 at 20 req/s was repeated and is not used: ${reason}`,
    );
    expect(texts(svg)).toEqual(expect.arrayContaining(['repeated, not used', 'saturation 60 req/s']));
  });

  it('has no repeated-step marks or legend entry when every step held', () => {
    // Act
    const svg = parseXml(renderChartSvg(guideReport()));

    // Assess
    expect(byId(svg, 'repeated-steps')).toBeUndefined();
    expect(allElements(svg).filter((e) => e.name === 'path')).toEqual([]);
    expect(texts(svg)).not.toContain('repeated, not used');
  });

  it('is self-contained: no scripts, external references or stylesheets', () => {
    // Act
    const svg = renderChartSvg(guideReport());
    const elements = allElements(parseXml(svg));

    // Assess
    expect(elements.map((e) => e.name)).not.toEqual(
      expect.arrayContaining(['script', 'style', 'image', 'foreignObject']),
    );
    expect(elements.filter((e) => Object.keys(e.attributes).some((a) => a === 'href' || a === 'xlink:href'))).toEqual(
      [],
    );
    expect(svg.replace('http://www.w3.org/2000/svg', '')).not.toMatch(/https?:|url\(|@import/);
  });

  it('escapes a model name that is not XML-safe', () => {
    // Prepare
    const input = testInput();
    const odd = testInput({ target: { ...input.target, model: 'a<b & "c"' } });

    // Act
    const svg = renderChartSvg(guideReport({ input: odd }));

    // Assess
    expect(() => parseXml(svg)).not.toThrow();
    expect(svg).toContain('Calibration of a&#60;b &#38; &#34;c&#34;');
  });

  it('says so, with no knee, when saturation was not found', () => {
    // Prepare
    const input = testInput();
    const steps = buildSteps(
      [10, 20, 30].map((rate) => ({ rateRps: rate })),
      input,
    );

    // Act
    const svg = parseXml(renderChartSvg(guideReport({ input, steps, change: null })));

    // Assess
    expect(byId(svg, 'knee')).toBeUndefined();
    expect(texts(svg)).toContain('no saturation within the plan');
  });
});

describe('Function: niceScale', () => {
  it.each([
    { case: 'queue depths up to 350', max: 350, top: 400, ticks: [0, 100, 200, 300, 400] },
    { case: 'latencies up to 8 s', max: 8, top: 8, ticks: [0, 2, 4, 6, 8] },
    { case: 'rates up to 70', max: 70, top: 80, ticks: [0, 20, 40, 60, 80] },
    { case: 'small fractions', max: 0.57, top: 0.6, ticks: [0, 0.2, 0.4, 0.6] },
    { case: 'nothing at all', max: 0, top: 1, ticks: [0, 0.2, 0.4, 0.6, 0.8, 1] },
  ])('picks round ticks for $case', ({ max, top, ticks }) => {
    // Act
    const scale = niceScale(max);

    // Assess
    expect(scale.max).toBeCloseTo(top);
    expect(scale.ticks).toEqual(ticks);
  });
});

describe('Function: parseXml (test helper)', () => {
  it.each([
    { case: 'an unclosed tag', xml: '<svg><g></svg>' },
    { case: 'a bare ampersand', xml: '<svg><text>a & b</text></svg>' },
    { case: 'an unquoted attribute', xml: '<svg width=10></svg>' },
    { case: 'two roots', xml: '<svg/><svg/>' },
  ])('rejects $case', ({ xml }) => {
    // Act / Assess
    expect(() => parseXml(xml)).toThrow(XmlNotWellFormedError);
  });
});
