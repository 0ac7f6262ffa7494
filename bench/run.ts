/**
 * `npm run bench`: how fast the engine model simulates, and how long the product's PromQL takes against the twin's
 * real Prometheus. Prints figures and asserts nothing. `--json FILE` writes the results there instead of appending
 * them to stdout.
 */
import { writeFile } from 'node:fs/promises';
import { cpus, platform } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadProfile } from '../sim/twin/loadProfile.js';
import { benchCatalog } from './catalogLatency.js';
import { benchEngine } from './engineThroughput.js';
import { BenchUsageError } from './errors.js';
import { type BenchResults, renderReport } from './report.js';

function parseCommandLine(argv: string[]): { jsonFile: string | undefined } {
  try {
    const { values } = parseArgs({ args: argv, options: { json: { type: 'string' } }, strict: true });
    if (values.json === '') throw new BenchUsageError('--json', 'empty file name', 'a file path');
    return { jsonFile: values.json };
  } catch (error) {
    if (error instanceof BenchUsageError) throw error;
    throw new BenchUsageError('arguments', (error as Error).message, '--json FILE', { cause: error });
  }
}

async function main(): Promise<void> {
  const { jsonFile } = parseCommandLine(process.argv.slice(2));
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
  const engine = engineCases.map((benchCase) => {
    log(`engine: ${benchCase.profile.name} at ${benchCase.rps} req/s for ${benchCase.durationS} simulated s, 5 runs`);
    return benchEngine(benchCase, 5);
  });

  const catalog = await benchCatalog({
    profile: demo,
    warmupRps: 10,
    warmupS: 10,
    queryRuns: 200,
    catalogRuns: 20,
    rateWindow: '1m',
    log,
  });

  const cpu = cpus();
  const results: BenchResults = {
    startedAt,
    environment: {
      node: process.version,
      platform: `${platform()} ${process.arch}`,
      cpu: cpu[0]?.model ?? 'unknown',
      cpus: cpu.length,
    },
    engine,
    catalog,
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
