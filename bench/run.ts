/**
 * `npm run bench`: how fast the engine model simulates, how long the product's PromQL takes against the twin's
 * real Prometheus, how fast each alert reaches SNS on the twin and what one evaluation cycle costs, how big each
 * function bundle is and how long it takes to import, what the schedules cost per month, and how long `vllm-pilot
 * whatif` takes to replay a day through three candidates. Prints figures and
 * asserts nothing. `--json FILE` writes the results there instead of appending them to stdout.
 *
 *   npm run bench -- [--json FILE] [--only engine,catalog,alerts,bundles,cost,whatif] [--quick] [--eval-interval SECONDS]
 *
 * `--quick` divides the alerts' `for` durations and rate windows by 10 (about 2 min instead of about 9), and
 * measures the cost without waiting for the full query history (about 2 min instead of about 9; lower bounds);
 * `--eval-interval` is the seconds between the evaluator's cycles in the bench (four per invocation, as production runs
 * four 15 s cycles a minute; default 15, or 2 with `--quick`). The alerts run lag-free, then with AMP's lag.
 */
import { writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadProfile } from '../sim/harness/index.js';
import { fileURLToPath } from 'node:url';
import { benchAlerts } from './alerts.js';
import { benchBundles } from './bundles.js';
import { benchCatalog } from './catalogLatency.js';
import { benchCost } from './cost.js';
import { benchEngine } from './engineThroughput.js';
import { benchWhatIf } from './whatif.js';
import { BenchUsageError } from './errors.js';
import { benchEnvironment, type BenchResults, renderReport } from './report.js';

const SECTIONS = ['engine', 'catalog', 'alerts', 'bundles', 'cost', 'whatif'] as const;
type Section = (typeof SECTIONS)[number];

interface CommandLine {
  jsonFile: string | undefined;
  sections: Set<Section>;
  quick: boolean;
  evalIntervalS: number | undefined;
}

const USAGE = `[--json FILE] [--only ${SECTIONS.join(',')}] [--quick] [--eval-interval SECONDS]`;

function parseCommandLine(argv: string[]): CommandLine {
  let values: { json?: string; only?: string; quick?: boolean; 'eval-interval'?: string };
  try {
    values = parseArgs({
      args: argv,
      options: {
        json: { type: 'string' },
        only: { type: 'string' },
        quick: { type: 'boolean' },
        'eval-interval': { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (error) {
    throw new BenchUsageError('arguments', (error as Error).message, USAGE, { cause: error });
  }
  if (values.json === '') throw new BenchUsageError('--json', 'empty file name', 'a file path');
  const sections = new Set<Section>(SECTIONS);
  if (values.only !== undefined) {
    sections.clear();
    for (const name of values.only.split(',').map((part) => part.trim())) {
      if (!(SECTIONS as readonly string[]).includes(name))
        throw new BenchUsageError(
          '--only',
          `${JSON.stringify(name)} is not a section`,
          `a comma-separated list of ${SECTIONS.join(', ')}`,
        );
      sections.add(name as Section);
    }
  }
  let evalIntervalS: number | undefined;
  if (values['eval-interval'] !== undefined) {
    evalIntervalS = Number(values['eval-interval']);
    // The twin scrapes every second: evaluating more often would see no new sample.
    if (!Number.isFinite(evalIntervalS) || evalIntervalS < 1 || evalIntervalS > 60)
      throw new BenchUsageError(
        '--eval-interval',
        `${JSON.stringify(values['eval-interval'])} is not valid`,
        'a number of seconds from 1 to 60 between evaluation cycles (production: 15)',
      );
  }
  return { jsonFile: values.json, sections, quick: values.quick ?? false, evalIntervalS };
}

async function main(): Promise<void> {
  const { jsonFile, sections, quick, evalIntervalS } = parseCommandLine(process.argv.slice(2));
  const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
  const startedAt = new Date().toISOString();
  const wallStart = performance.now();
  const [ministral, demo] = await Promise.all([loadProfile('ministral-8b-l40s'), loadProfile('demo')]);

  // The guide's shape on the guide's profile, near and past saturation (~57 req/s), and the demo's shape.
  const guideShape = { promptTokens: 35, maxTokens: 100 };
  const engineCases = [
    { name: 'ministral-50', profile: ministral, shape: guideShape, rps: 50, durationS: 300 },
    { name: 'ministral-70', profile: ministral, shape: guideShape, rps: 70, durationS: 300 },
    { name: 'demo-30', profile: demo, shape: { promptTokens: 35, maxTokens: 32 }, rps: 30, durationS: 300 },
  ];
  const sectionWallS: Record<string, number> = {};
  /** Runs a section when selected, recording its wall time. */
  const timed = async <T>(section: Section, run: () => T | Promise<T>): Promise<T | undefined> => {
    if (!sections.has(section)) return undefined;
    const began = performance.now();
    try {
      return await run();
    } finally {
      sectionWallS[section] = (performance.now() - began) / 1000;
    }
  };
  const engine = await timed('engine', () =>
    engineCases.map((benchCase) => {
      log(`engine: ${benchCase.profile.name} at ${benchCase.rps} req/s for ${benchCase.durationS} simulated s, 5 runs`);
      return benchEngine(benchCase, 5);
    }),
  );

  const catalog = await timed('catalog', () =>
    benchCatalog({
      profile: demo,
      warmupRps: 10,
      warmupS: 10,
      queryRuns: 200,
      catalogRuns: 20,
      rateWindow: '1m',
      log,
    }),
  );

  const alerts = await timed('alerts', () =>
    benchAlerts({
      profile: demo,
      mode: quick ? 'quick' : 'guide',
      ...(evalIntervalS === undefined ? {} : { evalIntervalS }),
      log,
    }),
  );

  const root = fileURLToPath(new URL('..', import.meta.url));
  const bundles = await timed('bundles', () => benchBundles({ root, log }));
  const cost = await timed('cost', () => benchCost({ root, profile: demo, quick, log }));
  const whatif = await timed('whatif', () => benchWhatIf({ root, profile: demo, log }));

  const results: BenchResults = {
    startedAt,
    environment: benchEnvironment(),
    ...(engine === undefined ? {} : { engine }),
    ...(catalog === undefined ? {} : { catalog }),
    ...(alerts === undefined ? {} : { alerts }),
    ...(bundles === undefined ? {} : { bundles }),
    ...(cost === undefined ? {} : { cost }),
    ...(whatif === undefined ? {} : { whatif }),
    sectionWallS,
    totalWallS: (performance.now() - wallStart) / 1000,
  };
  process.stdout.write(`${renderReport(results)}\n`);
  const json = `${JSON.stringify(results, null, 2)}\n`;
  if (jsonFile === undefined) process.stdout.write(`\n${json}`);
  else {
    await writeFile(jsonFile, json);
    process.stdout.write(`Results written to ${jsonFile}\n`);
  }
}

try {
  await main();
} catch (error) {
  const e = error as Error;
  process.stderr.write(`bench: ${e.name}: ${e.message}\n`);
  process.exitCode = 1;
}
