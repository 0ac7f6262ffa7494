import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  candidateFromScaledObject,
  guideCandidate,
  measurePerformanceModel,
  parseTraceCsv,
  type Profile,
  replay,
  reportCandidate,
} from '../sim/harness/index.js';
import { parse as parseYaml } from 'yaml';

/** The shipped sample and the CLI test's fixtures: the run `docs/cli.md#whatif` shows. */
const TRACE = 'sim/whatif/traces/diurnal-24h.csv';
const REPORT = 'sim/whatif/fixtures/report-demo.json';
const SCALED_OBJECT = 'sim/whatif/fixtures/scaledobject-fast.yaml';

export interface WhatIfBenchOptions {
  root: string;
  profile: Profile;
  log: (line: string) => void;
}

export interface WhatIfBenchResult {
  profile: string;
  trace: string;
  traceSeconds: number;
  /** Wall seconds to measure the per-replica curve with the engine (once per run). */
  modelS: number;
  /** Wall seconds of each candidate's replay of the whole trace. */
  replays: Array<{ candidate: string; wallS: number; sloAttainment: number; gpuHours: number }>;
  /** Model + every replay: what `vllm-pilot whatif` spends after it has started and read its files. */
  totalS: number;
}

/**
 * Times `vllm-pilot whatif`'s work in-process: the 24-hour sample through the guide's defaults, a calibration report
 * and a ScaledObject file on the demo profile (the CLI's own start-up, a second or two, is not counted).
 */
export async function benchWhatIf(options: WhatIfBenchOptions): Promise<WhatIfBenchResult> {
  const { root, profile, log } = options;
  const trace = parseTraceCsv(await readFile(join(root, TRACE), 'utf8'), TRACE);
  const candidates = [
    guideCandidate(profile.model),
    reportCandidate(`report:${REPORT}`, profile.model, JSON.parse(await readFile(join(root, REPORT), 'utf8'))),
    candidateFromScaledObject(SCALED_OBJECT, parseYaml(await readFile(join(root, SCALED_OBJECT), 'utf8'))),
  ];
  log(`whatif: ${trace.rps.length} s of ${TRACE} through ${candidates.length} candidates on ${profile.name}`);
  const began = performance.now();
  const model = measurePerformanceModel(profile, { promptTokens: 35, maxTokens: 100 });
  const modelS = (performance.now() - began) / 1000;
  const replays = candidates.map((candidate) => {
    const start = performance.now();
    const result = replay({
      trace,
      candidate,
      model,
      modelLoadSeconds: profile.startup.modelLoadSeconds,
      sloSeconds: 5,
    });
    const wallS = (performance.now() - start) / 1000;
    return { candidate: candidate.label, wallS, sloAttainment: result.sloAttainment, gpuHours: result.gpuHours };
  });
  return {
    profile: profile.name,
    trace: TRACE,
    traceSeconds: trace.rps.length,
    modelS,
    replays,
    totalS: (performance.now() - began) / 1000,
  };
}
