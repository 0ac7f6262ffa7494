import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Candidate, Profile, RateTrace, TwinWhatIfSources } from '../../sim/harness/index.js';
import { systemClock } from '../../shared/clock/index.js';
import { GUIDE_SCALING } from '../../shared/keda/index.js';
import { CliFileInvalidError, CliOptionInvalidError } from '../errors.js';
import { harness } from '../harness.js';
import { formatNumber, table } from '../output.js';
import { positiveInteger, positiveNumber, printJson } from '../options.js';
import { readStructuredFile } from '../readFile.js';

/** The guide's request shape: a prompt of about 35 tokens and `max_tokens` 100 (as `twin capacity`). */
const GUIDE_SHAPE = { promptTokens: 35, maxTokens: 100 } as const;

const CANDIDATE_FORMS =
  'guide, report:FILE.json (a calibration report), FILE.yaml|FILE.yml|FILE.json (a ScaledObject), or with --state-file live or calibrated';

interface WhatIfOptions {
  trace?: string;
  fromAmp?: boolean;
  hours: number;
  rateScale: number;
  stateFile?: string;
  candidate: string[];
  profile: string;
  promptTokens: number;
  maxTokens: number;
  slo: number;
  svg?: string;
  json?: boolean;
}

/** `vllm-pilot whatif`: replays a request-rate trace through candidate ScaledObjects on the twin's virtual clock. */
export function registerWhatIfCommand(program: Command): void {
  program
    .command('whatif')
    .description(
      "replay a request-rate trace through candidate ScaledObjects with the twin's engine, KEDA and HPA on a virtual clock (a day in seconds)",
    )
    .option('--trace <file.csv>', 'the request rate: a CSV with a header `seconds,rps` or `timestamp,rps`, any step')
    .option(
      '--from-amp',
      "instead of --trace: the target's completed-request rate over the last --hours, from the twin's AMP (needs --state-file)",
    )
    .option('--hours <n>', 'with --from-amp: how many hours back', positiveNumber, 24)
    .option(
      '--rate-scale <x>',
      "multiply every rate of the trace by x (e.g. to size the demo's sample for another profile's replica)",
      positiveNumber,
      1,
    )
    .option(
      '--state-file <file>',
      'a running twin (`twin up`): for --from-amp and the candidates live (its ScaledObject) and calibrated (its newest calibrated thresholds)',
    )
    .requiredOption(
      '--candidate <spec>',
      `a ScaledObject to replay, repeatable: ${CANDIDATE_FORMS}`,
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .requiredOption(
      '--profile <name|file>',
      'the replica: a built-in profile (demo, ministral-8b-l40s) or a YAML/JSON file',
    )
    .option('--prompt-tokens <n>', 'prompt length in tokens', positiveInteger, GUIDE_SHAPE.promptTokens)
    .option('--max-tokens <n>', 'max_tokens of every request', positiveInteger, GUIDE_SHAPE.maxTokens)
    .option(
      '--slo <seconds>',
      'a second meets the SLO when its p95 end-to-end latency is at most this',
      positiveNumber,
      GUIDE_SCALING.latencyThresholdSeconds,
    )
    .option('--svg <file>', 'also draw the offered rate, Pods and p95 of every candidate over time into this SVG')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  vllm-pilot whatif --profile demo --trace sim/whatif/traces/diurnal-24h.csv \\\n' +
        '    --candidate guide --candidate report:demo-output/report.json --candidate my-scaledobject.yaml --svg whatif.svg\n' +
        '  # your account: the live ScaledObject against a calibration report of the stack, over your own trace\n' +
        '  kubectl get scaledobject vllm-inference-app -o yaml > live.yaml\n' +
        '  vllm-pilot whatif --profile my-replica.yaml --trace prod-24h.csv --candidate guide --candidate live.yaml \\\n' +
        '    --candidate report:report.json   # aws s3 cp s3://<ReportBucketName>/calibrations/.../report.json .',
    )
    .action(async (opts: WhatIfOptions) => {
      const started = performance.now();
      const h = await harness();
      const profile = await h.loadProfile(opts.profile);
      if (opts.trace === undefined && opts.fromAmp !== true)
        throw new CliOptionInvalidError('--trace', '', 'a CSV file, or --from-amp with --state-file');
      if (opts.trace !== undefined && opts.fromAmp === true)
        throw new CliOptionInvalidError('--from-amp', 'true', 'either --trace or --from-amp, not both');
      const twin =
        opts.stateFile === undefined ? undefined : h.twinWhatIfSources(await h.readTwinState(opts.stateFile));
      try {
        const read =
          opts.trace !== undefined
            ? h.parseTraceCsv(await readText('--trace', opts.trace), `--trace ${opts.trace}`)
            : await requireTwin(twin, '--from-amp').requestRate(opts.hours, systemClock.now());
        const source = opts.trace ?? `the last ${formatNumber(opts.hours)} h from AMP`;
        const traceName = opts.rateScale === 1 ? source : `${source} × ${formatNumber(opts.rateScale)}`;
        const trace = opts.rateScale === 1 ? read : { ...read, rps: read.rps.map((rps) => rps * opts.rateScale) };
        const candidates: Candidate[] = [];
        for (const spec of opts.candidate) candidates.push(await readCandidate(spec, profile.model, twin));
        await report(opts, profile, trace, traceName, candidates, started);
      } finally {
        twin?.close();
      }
    });
}

/** Replays every candidate and prints (or writes) what they did. */
async function report(
  opts: WhatIfOptions,
  profile: Profile,
  trace: RateTrace,
  traceName: string,
  candidates: Candidate[],
  started: number,
): Promise<void> {
  const h = await harness();
  const shape = { promptTokens: opts.promptTokens, maxTokens: opts.maxTokens };
  const model = h.measurePerformanceModel(profile, shape);
  const results = candidates.map((candidate) =>
    h.replay({
      trace,
      candidate,
      model,
      modelLoadSeconds: profile.startup.modelLoadSeconds,
      sloSeconds: opts.slo,
    }),
  );
  const wallS = (performance.now() - started) / 1000;
  if (opts.svg !== undefined) {
    const title = `What-if: ${traceName} on ${profile.name} (${formatNumber(model.capacityRps)} req/s per replica)`;
    try {
      await writeFile(opts.svg, h.renderWhatIfSvg(results, title));
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      throw new CliFileInvalidError('--svg', opts.svg, `cannot write it (${e.code ?? e.message})`, undefined, {
        cause: error,
      });
    }
  }
  const rows = results.map((r, i) => {
    const so = candidates[i]?.scaledObject;
    const queue = so?.triggers[candidates[i]?.queueTrigger ?? 0];
    const latency = so?.triggers[candidates[i]?.latencyTrigger ?? 1];
    return {
      candidate: r.candidate,
      queuePerPod: queue?.threshold ?? null,
      queueMetricType: queue?.metricType ?? null,
      p95Seconds: latency?.threshold ?? null,
      p95MetricType: latency?.metricType ?? null,
      minReplicaCount: so?.minReplicaCount ?? 0,
      maxReplicaCount: so?.maxReplicaCount ?? null,
      pollingIntervalSeconds: r.pollingIntervalSeconds,
      sloAttainment: round(r.sloAttainment, 4),
      gpuHours: round(r.gpuHours, 2),
      worstQueue: { waiting: round(r.worstQueue.waiting, 1), atSecond: r.worstQueue.atSecond },
      worstP95S: Number.isFinite(r.worstP95S) ? round(r.worstP95S, 2) : null,
      scalingEvents: r.scalingEvents,
      pods: r.replicas,
      offeredRequests: Math.round(r.offeredRequests),
      completedRequests: Math.round(r.completedRequests),
    };
  });
  // Thresholds calibrated for another request shape are judged here against a replica they were not measured on.
  const notes = candidates.flatMap((c) => {
    const measured = c.calibratedShape;
    if (
      measured === undefined ||
      (measured.promptTokens === shape.promptTokens && measured.maxTokens === shape.maxTokens)
    )
      return [];
    return [
      `${c.label} was calibrated with prompt ${measured.promptTokens}, max_tokens ${measured.maxTokens}; this replay ` +
        `uses prompt ${shape.promptTokens}, max_tokens ${shape.maxTokens} (--prompt-tokens, --max-tokens)`,
    ];
  });
  const summary = {
    profile: profile.name,
    shape,
    capacityRps: round(model.capacityRps, 3),
    modelLoadSeconds: profile.startup.modelLoadSeconds,
    trace: { source: traceName, seconds: trace.rps.length },
    sloSeconds: opts.slo,
    wallSeconds: round(wallS, 2),
    candidates: rows,
    notes,
    ...(opts.svg !== undefined ? { svg: opts.svg } : {}),
  };
  if (opts.json) {
    printJson(summary);
    return;
  }
  process.stdout.write(
    `Replayed ${traceName} (${formatNumber(trace.rps.length / 3600)} h) on profile ${profile.name}: one replica ` +
      `completes ${formatNumber(model.capacityRps)} req/s (prompt ${shape.promptTokens}, max_tokens ${shape.maxTokens}), ` +
      `a new Pod is Ready after ${profile.startup.modelLoadSeconds} s; SLO p95 <= ${formatNumber(opts.slo)} s. ` +
      `${results.length} candidate(s) in ${formatNumber(wallS)} s.\n\n` +
      table(
        [
          'candidate',
          'queue/Pod',
          'p95 s (type)',
          'Pods',
          'SLO met',
          'GPU-hours',
          'worst queue',
          'at',
          'worst p95 s',
          'scalings',
        ],
        rows.map((r, i) => [
          r.candidate,
          r.queuePerPod ?? '-',
          `${r.p95Seconds ?? '-'} (${r.p95MetricType ?? '-'})`,
          `${r.pods.min}-${r.pods.max}`,
          `${((results[i]?.sloAttainment ?? 0) * 100).toFixed(1)} %`,
          r.gpuHours,
          r.worstQueue.waiting,
          clock(r.worstQueue.atSecond),
          r.worstP95S === null ? 'unserved' : r.worstP95S,
          r.scalingEvents,
        ]),
      ) +
      '\n' +
      notes.map((note) => `\nNote: ${note}\n`).join('') +
      (opts.svg !== undefined ? `\nChart: ${opts.svg}\n` : ''),
  );
}

/** A candidate from its spec; fails naming --candidate and the accepted forms. */
async function readCandidate(spec: string, model: string, twin: TwinWhatIfSources | undefined): Promise<Candidate> {
  const h = await harness();
  if (spec === 'guide') return h.guideCandidate(model);
  if (spec === 'live') return h.candidateFromScaledObject(spec, await requireTwin(twin, spec).liveScaledObject());
  if (spec === 'calibrated') {
    const { thresholds, executionName, requestShape } = await requireTwin(twin, spec).calibratedThresholds();
    return h.thresholdsCandidate(`calibrated (${executionName})`, model, thresholds, requestShape);
  }
  if (spec.startsWith('report:')) {
    const path = spec.slice('report:'.length);
    if (path === '')
      throw new CliOptionInvalidError('--candidate', spec, `a file after report:; accepted: ${CANDIDATE_FORMS}`);
    return h.reportCandidate(spec, model, await readStructuredFile('--candidate', path));
  }
  if (/\.(ya?ml|json)$/i.test(spec))
    return h.candidateFromScaledObject(spec, await readStructuredFile('--candidate', spec));
  throw new CliOptionInvalidError('--candidate', spec, CANDIDATE_FORMS);
}

/** The running twin a candidate or --from-amp needs; refused naming the flag when --state-file is missing. */
function requireTwin(twin: TwinWhatIfSources | undefined, what: string): TwinWhatIfSources {
  if (twin === undefined)
    throw new CliOptionInvalidError(
      what === '--from-amp' ? '--from-amp' : '--candidate',
      what === '--from-amp' ? 'true' : what,
      '--state-file of a running twin (`vllm-pilot twin up --state-file F`) as well',
    );
  return twin;
}

async function readText(flag: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new CliFileInvalidError(flag, path, `cannot read it (${e.code ?? e.message})`, undefined, { cause: error });
  }
}

/** Seconds since the trace's start as `HH:MM:SS`. */
function clock(seconds: number): string {
  const hh = Math.floor(seconds / 3600);
  const mm = Math.floor((seconds % 3600) / 60);
  const ss = seconds % 60;
  return [hh, mm, ss].map((v) => String(v).padStart(2, '0')).join(':');
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
