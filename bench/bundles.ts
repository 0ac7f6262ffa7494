import { spawn } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { parse as parseYaml } from 'yaml';
import { CALIBRATION_STEPS } from '../shared/calibration/workflow/index.js';
import { quantile } from '../shared/util/index.js';
import { BenchError } from './errors.js';

/**
 * The bundles part of `npm run bench`: every Lambda handler file of serverless.yml bundled the way the stack bundles
 * it (serverless-esbuild, `custom.esbuild`), then measured: minified bytes, gzipped bytes (what a zip of it roughly
 * weighs), and the cold import time (median of fresh `node` processes each timing `await import(bundle)`), which is
 * the part of a Lambda cold start this code controls.
 */

/** A function of the stack and its handler string (`functions/x/handler.handler`). */
export interface FunctionEntry {
  name: string;
  handler: string;
}

/** The file a handler string points at (without extension) and the export path inside it. */
export interface HandlerRef {
  file: string;
  exportPath: string[];
}

/**
 * Splits a serverless handler string: the part up to the first `.` after the last `/` is the file, the rest the
 * export path (`functions/calibration/lambda.handlers.deploy` → file `functions/calibration/lambda`, export
 * `handlers.deploy`), as the Lambda Node.js runtime resolves it.
 */
export function parseHandler(handler: string): HandlerRef {
  const slash = handler.lastIndexOf('/');
  const dot = handler.indexOf('.', slash + 1);
  const file = dot === -1 ? '' : handler.slice(0, dot);
  const exportPath = dot === -1 ? [] : handler.slice(dot + 1).split('.');
  if (file === '' || file.endsWith('/') || exportPath.length === 0 || exportPath.some((part) => part === ''))
    throw new BenchError(
      `handler ${JSON.stringify(handler)} is not valid; accepted: "<path/to/file>.<export>[.<property>]", ` +
        'e.g. "functions/metrics-collector/handler.handler"',
    );
  return { file, exportPath };
}

/** The stack's functions as serverless.yml will list them (H3's brief), for use until the file exists. */
export function fallbackFunctions(): FunctionEntry[] {
  return [
    { name: 'metricsCollector', handler: 'functions/metrics-collector/handler.handler' },
    { name: 'alertEvaluator', handler: 'functions/alert-evaluator/handler.handler' },
    { name: 'slackNotifier', handler: 'functions/slack-notifier/handler.handler' },
    { name: 'preflight', handler: 'functions/preflight/handler.handler' },
    ...Object.keys(CALIBRATION_STEPS).map((name) => ({
      name,
      handler: `functions/calibration/${name}.handler`,
    })),
  ];
}

/** One bundle: a handler file and the functions that share it. */
export interface BundleGroup {
  /** The handler file without extension, relative to the project root. */
  file: string;
  functions: Array<{ name: string; exportPath: string[] }>;
}

/** Groups functions by handler file, in the order each file first appears. */
export function groupByFile(functions: readonly FunctionEntry[]): BundleGroup[] {
  const groups = new Map<string, BundleGroup>();
  for (const fn of functions) {
    const ref = parseHandler(fn.handler);
    let group = groups.get(ref.file);
    if (group === undefined) {
      group = { file: ref.file, functions: [] };
      groups.set(ref.file, group);
    }
    group.functions.push({ name: fn.name, exportPath: ref.exportPath });
  }
  return [...groups.values()];
}

/** The createRequire banner (docs/adr/0011): without it an ESM bundle fails with `Dynamic require of "node:https"`. */
export const CREATE_REQUIRE_BANNER = "import{createRequire}from'module';const require=createRequire(import.meta.url);";

/** The bundle options the stack uses when serverless.yml does not say otherwise (the same as its custom.esbuild). */
export const DEFAULT_BUNDLE_OPTIONS = {
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outputFileExtension: '.mjs',
  banner: { js: CREATE_REQUIRE_BANNER },
} as const;

/** The esbuild options of one bench bundle, and the serverless-esbuild keys the bench did not apply. */
export interface ResolvedBundleOptions {
  options: Pick<
    BuildOptions,
    'bundle' | 'minify' | 'format' | 'platform' | 'target' | 'banner' | 'external' | 'mainFields' | 'conditions'
  > &
    Pick<BuildOptions, 'define' | 'keepNames' | 'treeShaking' | 'legalComments' | 'sourcemap' | 'alias'>;
  outputFileExtension: string;
  /** Keys of `custom.esbuild` that are about packaging, not bundling, or that the bench does not know. */
  ignored: string[];
}

/** serverless-esbuild keys that shape the bundle, and how they map to esbuild's. */
const APPLIED_KEYS = new Set([
  'bundle',
  'minify',
  'format',
  'platform',
  'target',
  'banner',
  'external',
  'exclude',
  'mainFields',
  'conditions',
  'define',
  'keepNames',
  'treeShaking',
  'legalComments',
  'sourcemap',
  'outputFileExtension',
  'alias',
]);

/**
 * The esbuild options of `custom.esbuild` (serverless-esbuild's keys: esbuild's own plus `exclude` and
 * `outputFileExtension`), over DEFAULT_BUNDLE_OPTIONS. `external` and `exclude` both stay out of the bundle
 * (serverless-esbuild passes both to esbuild as external; `exclude: '*'` means every dependency). A value still
 * holding a serverless variable (`${...}`) cannot be resolved here: the default is kept and the key reported.
 * `alias` maps a package to another one or to a path (`./...`), which esbuild resolves from its working directory:
 * the project root, both here (absWorkingDir) and under `osls package` (run from the service directory).
 */
export function bundleOptionsFrom(custom: unknown): ResolvedBundleOptions {
  const settings: Record<string, unknown> =
    custom !== null && typeof custom === 'object' && !Array.isArray(custom) ? (custom as Record<string, unknown>) : {};
  const ignored: string[] = [];
  const pick = (key: string): unknown => {
    const value = settings[key];
    if (value === undefined) return undefined;
    if (JSON.stringify(value).includes('${')) {
      ignored.push(`${key} (a serverless variable)`);
      return undefined;
    }
    return value;
  };
  for (const key of Object.keys(settings)) if (!APPLIED_KEYS.has(key)) ignored.push(key);

  const list = (key: string): string[] => {
    const value = pick(key);
    if (value === undefined) return [];
    if (typeof value === 'string') return [value];
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
    throw new BenchError(`custom.esbuild.${key} is ${JSON.stringify(value)}; accepted: a string or a list of strings`);
  };
  const external = [...list('external'), ...list('exclude')];
  const banner = pick('banner');
  const options: ResolvedBundleOptions['options'] = {
    bundle: (pick('bundle') as boolean | undefined) ?? DEFAULT_BUNDLE_OPTIONS.bundle,
    minify: (pick('minify') as boolean | undefined) ?? DEFAULT_BUNDLE_OPTIONS.minify,
    format: (pick('format') as BuildOptions['format']) ?? DEFAULT_BUNDLE_OPTIONS.format,
    platform: (pick('platform') as BuildOptions['platform']) ?? DEFAULT_BUNDLE_OPTIONS.platform,
    target: (pick('target') as BuildOptions['target']) ?? DEFAULT_BUNDLE_OPTIONS.target,
    banner: (banner as Record<string, string> | undefined) ?? { ...DEFAULT_BUNDLE_OPTIONS.banner },
    // `*` is serverless-esbuild's "every dependency": esbuild's equivalent is packages=external (set below).
    ...(external.length > 0 ? { external: external.filter((e) => e !== '*') } : {}),
  };
  for (const key of ['mainFields', 'conditions'] as const) {
    const value = list(key);
    if (value.length > 0) options[key] = value;
  }
  const alias = pick('alias');
  if (alias !== undefined) {
    if (
      alias === null ||
      typeof alias !== 'object' ||
      Array.isArray(alias) ||
      !Object.values(alias).every((v) => typeof v === 'string')
    )
      throw new BenchError(
        `custom.esbuild.alias is ${JSON.stringify(alias)}; accepted: a map of package name to a package or a ./path`,
      );
    options.alias = alias as Record<string, string>;
  }
  const define = pick('define');
  if (define !== undefined) options.define = define as Record<string, string>;
  for (const key of ['keepNames', 'treeShaking'] as const) {
    const value = pick(key);
    if (typeof value === 'boolean') options[key] = value;
  }
  const sourcemap = pick('sourcemap');
  if (sourcemap !== undefined) options.sourcemap = sourcemap as BuildOptions['sourcemap'];
  const legalComments = pick('legalComments');
  if (legalComments !== undefined) options.legalComments = legalComments as BuildOptions['legalComments'];
  if (external.includes('*')) ignored.push('exclude "*" (applied as packages=external)');
  const outputFileExtension =
    (pick('outputFileExtension') as string | undefined) ?? DEFAULT_BUNDLE_OPTIONS.outputFileExtension;
  return { options, outputFileExtension, ignored };
}

/** Where the function list came from. */
export interface StackSource {
  /**
   * `osls print`: the configuration as osls resolves it (variables, `${file(...)}` JavaScript included), offline;
   * `serverless.yml`: the file read as YAML (only plain maps); `fallback`: the built-in list.
   */
  kind: 'osls print' | 'serverless.yml' | 'fallback';
  /** Why a later source was used. */
  reason?: string;
  /** `custom.esbuild` came from the stack's configuration. */
  esbuildFromFile: boolean;
}

/** The parts of a serverless configuration the bench reads. */
interface StackConfig {
  functions?: unknown;
  custom?: { esbuild?: unknown };
}

/**
 * The functions of a serverless configuration: a map of name to definition, or a list of such maps (serverless
 * accepts both). Every handler must be a plain string: an unresolved variable is refused, naming the function.
 */
export function functionsOf(value: unknown): FunctionEntry[] {
  const maps = Array.isArray(value) ? value : [value];
  const entries: FunctionEntry[] = [];
  for (const map of maps) {
    if (map === null || typeof map !== 'object' || Array.isArray(map))
      throw new BenchError(
        `functions holds ${JSON.stringify(map)}; accepted: a map of function name to definition (or a list of maps)`,
      );
    for (const [name, fn] of Object.entries(map as Record<string, unknown>)) {
      const handler = (fn as { handler?: unknown } | null)?.handler;
      if (typeof handler !== 'string' || handler.includes('${'))
        throw new BenchError(`functions.${name}.handler is ${JSON.stringify(handler)}; accepted: a handler string`);
      entries.push({ name, handler });
    }
  }
  if (entries.length === 0) throw new BenchError('functions lists no function');
  return entries;
}

/** Longest `osls print` may take (it loads the plugins and runs the stack's JavaScript; about 8 s measured). */
const OSLS_PRINT_TIMEOUT_MS = 60_000;

/** The resolved configuration from `osls print --format json` in `root` (offline, no AWS credentials needed). */
function oslsPrint(root: string): Promise<StackConfig> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(join(root, 'node_modules', '.bin', 'osls'), ['print', '--format', 'json'], {
      cwd: root,
      env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: OSLS_PRINT_TIMEOUT_MS,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) {
        const why = signal === null ? `exit ${code}` : `killed by ${signal}`;
        reject(new BenchError(`osls print failed (${why}): ${err.trim().split('\n').slice(-3).join(' | ')}`));
        return;
      }
      try {
        resolvePromise(JSON.parse(out) as StackConfig);
      } catch (error) {
        reject(new BenchError('osls print did not print JSON', { cause: error }));
      }
    });
  });
}

/**
 * The stack's functions and bundle options: from `osls print` (what `osls package` will bundle); when that fails,
 * from serverless.yml read as plain YAML; when there is no serverless.yml or its functions cannot be read, the
 * fallback list with the stack's default options. `source.reason` says why a later source was used.
 */
export async function readStack(
  root: string,
): Promise<{ functions: FunctionEntry[]; bundle: ResolvedBundleOptions; source: StackSource }> {
  let text: string;
  try {
    text = await readFile(join(root, 'serverless.yml'), 'utf8');
  } catch {
    return {
      functions: fallbackFunctions(),
      bundle: bundleOptionsFrom(undefined),
      source: { kind: 'fallback', reason: 'no serverless.yml yet', esbuildFromFile: false },
    };
  }
  const reasons: string[] = [];
  try {
    const config = await oslsPrint(root);
    const esbuild = config.custom?.esbuild;
    return {
      functions: functionsOf(config.functions),
      bundle: bundleOptionsFrom(esbuild),
      source: { kind: 'osls print', esbuildFromFile: esbuild !== undefined },
    };
  } catch (error) {
    reasons.push((error as Error).message);
  }
  // CloudFormation tags (!Ref, !GetAtt) mean nothing to the yaml package: they stay plain values, silently.
  const doc = (parseYaml(text, { logLevel: 'silent' }) ?? {}) as StackConfig;
  const esbuild = doc.custom?.esbuild;
  const bundle = bundleOptionsFrom(esbuild);
  try {
    return {
      functions: functionsOf(doc.functions),
      bundle,
      source: { kind: 'serverless.yml', reason: reasons.join('; '), esbuildFromFile: esbuild !== undefined },
    };
  } catch (error) {
    reasons.push(`serverless.yml read as YAML: ${(error as Error).message}`);
    return {
      functions: fallbackFunctions(),
      bundle,
      source: { kind: 'fallback', reason: reasons.join('; '), esbuildFromFile: esbuild !== undefined },
    };
  }
}

/** The npm package an esbuild input path belongs to (`node_modules/@smithy/core/...` → `@smithy/core`), or `(project)`. */
export function packageOf(inputPath: string): string {
  const marker = 'node_modules/';
  const at = inputPath.lastIndexOf(marker);
  if (at === -1) return '(project)';
  const parts = inputPath.slice(at + marker.length).split('/');
  const first = parts[0] ?? '';
  return first.startsWith('@') ? `${first}/${parts[1] ?? ''}` : first;
}

/** The packages that weigh most in one esbuild output, largest first. */
export function largestPackages(metafile: Metafile, top: number): Array<{ name: string; bytes: number }> {
  const byPackage = new Map<string, number>();
  for (const output of Object.values(metafile.outputs))
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs))
      byPackage.set(packageOf(path), (byPackage.get(packageOf(path)) ?? 0) + bytesInOutput);
  return [...byPackage.entries()]
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

/** What one child process reports after importing a bundle. */
export interface ImportProbe {
  importMs: number;
  /** For each function of the bundle: `typeof` of its export (`function` when Lambda can call it). */
  exportTypes: Record<string, string>;
  /** The first call of the first function with an empty event, when asked for. */
  firstCall?: { ms: number; outcome: string };
}

/** The line of the child's stdout that carries its result (the handlers' loggers may print too). */
const PROBE_MARKER = 'BENCH_PROBE ';

/**
 * The child's script: time the import, look up each function's export, and optionally time the first call of the
 * first one with an empty event (the lazy init runs, then the event is refused before any AWS call). Reads its
 * input from the environment.
 */
const PROBE_SCRIPT = `
const { performance } = await import('node:perf_hooks');
const t0 = performance.now();
const mod = await import(process.env.BENCH_BUNDLE_URL);
const importMs = performance.now() - t0;
const exportTypes = {};
const functions = {};
for (const [name, path] of Object.entries(JSON.parse(process.env.BENCH_EXPORTS))) {
  let value = mod;
  for (const key of path) value = value == null ? undefined : value[key];
  exportTypes[name] = typeof value;
  functions[name] = value;
}
let firstCall;
if (process.env.BENCH_FIRST_CALL === '1') {
  const fn = Object.values(functions)[0];
  const context = { awsRequestId: 'bench', functionName: 'bench', getRemainingTimeInMillis: () => 60000 };
  const t1 = performance.now();
  let outcome = 'returned';
  try { await fn(JSON.parse(process.env.BENCH_FIRST_EVENT), context); } catch (error) { outcome = (error && error.name) || String(error); }
  firstCall = { ms: performance.now() - t1, outcome };
}
process.stdout.write('\\n${PROBE_MARKER}' + JSON.stringify({ importMs, exportTypes, firstCall }) + '\\n');
`;

/** Reads the probe's result line from the child's stdout. */
export function parseProbeOutput(out: string): ImportProbe {
  const line = out
    .split('\n')
    .reverse()
    .find((l) => l.startsWith(PROBE_MARKER));
  if (line === undefined)
    throw new BenchError(`the import probe printed no result: ${JSON.stringify(out.slice(-200))}`);
  return JSON.parse(line.slice(PROBE_MARKER.length)) as ImportProbe;
}

/**
 * Imports `bundlePath` in a fresh `node --input-type=module` process (the way Lambda loads an .mjs handler; `node -e`
 * without it would hide a Dynamic require failure behind its global `require`). With `firstCallEnv`, the child also
 * calls the first function once with an empty event in that environment. Rejects with the child's stderr.
 */
export function probeImport(
  bundlePath: string,
  exports: Record<string, string[]>,
  firstCall?: FirstCall,
): Promise<ImportProbe> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...firstCall?.env,
    BENCH_BUNDLE_URL: pathToFileURL(bundlePath).href,
    BENCH_EXPORTS: JSON.stringify(exports),
    BENCH_FIRST_CALL: firstCall === undefined ? '0' : '1',
    BENCH_FIRST_EVENT: JSON.stringify(firstCall?.event ?? {}),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  // A loader inherited from the bench (tsx) would slow the import and is not there in Lambda.
  delete env.NODE_OPTIONS;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE_SCRIPT], {
      env,
      cwd: dirname(bundlePath),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(
          new BenchError(
            `importing ${bundlePath} failed (exit ${code}): ${err.trim().split('\n').slice(0, 5).join(' | ')}`,
          ),
        );
        return;
      }
      try {
        resolvePromise(parseProbeOutput(out));
      } catch (error) {
        reject(error instanceof Error ? error : new BenchError(String(error)));
      }
    });
  });
}

/** The first call a probe makes: the environment of the lazy init and an event the handler refuses. */
export interface FirstCall {
  env: Record<string, string>;
  event: unknown;
}

/**
 * Each handler file's first call: the variables its config requires, with placeholder values and every endpoint on
 * a closed local port, so nothing can reach AWS (fake credentials, so the SDK's chain resolves without looking
 * further); and an event its handler refuses after the init (`{}` lacks EventBridge's `time`; preflight accepts
 * `{}` as "every target", so it gets a `targets` that is not a list). A `<folder>/*` key serves every handler file
 * of that folder (one per calibration step). Files not listed are not called.
 */
export const FIRST_CALLS: Readonly<Record<string, FirstCall>> = (() => {
  const nowhere = 'http://127.0.0.1:9';
  const target = JSON.stringify([
    { name: 'bench', cluster: 'bench', namespace: 'default', deployment: 'vllm', model: 'm' },
  ]);
  const common = {
    AWS_REGION: 'us-east-2',
    AWS_ACCESS_KEY_ID: 'AKIABENCHNOTAREALKEY',
    AWS_SECRET_ACCESS_KEY: 'bench-not-a-secret',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  };
  const topic = (name: string) => `arn:aws:sns:us-east-2:000000000000:${name}`;
  return {
    'functions/metrics-collector/handler': {
      event: {},
      env: {
        ...common,
        TARGETS: target,
        AMP_WORKSPACE_URL: nowhere,
        CLOUDWATCH_ENDPOINT: nowhere,
      },
    },
    'functions/alert-evaluator/handler': {
      event: {},
      env: {
        ...common,
        TARGETS: target,
        AMP_WORKSPACE_URL: nowhere,
        ALERT_TOPIC_ARN: topic('alerts'),
        ALERT_STATE_TABLE: 'alert-state',
        STAGE: 'bench',
        SNS_ENDPOINT: nowhere,
        DYNAMODB_ENDPOINT: nowhere,
        CLOUDWATCH_ENDPOINT: nowhere,
      },
    },
    'functions/slack-notifier/handler': {
      event: {},
      env: {
        ...common,
        SLACK_WEBHOOK_SECRET_ID: 'bench/slack',
        SECRETS_MANAGER_ENDPOINT: nowhere,
      },
    },
    'functions/preflight/handler': {
      event: { targets: 'all' },
      env: {
        ...common,
        TARGETS: target,
        AMP_WORKSPACE_URL: nowhere,
        PREFLIGHT_TOPIC_ARN: topic('preflight'),
        HISTORY_TABLE: 'history',
        ALERTING_ENGINE: 'lambda',
        ALERT_STATE_TABLE: 'alert-state',
        EKS_ENDPOINT: nowhere,
        SNS_ENDPOINT: nowhere,
        DYNAMODB_ENDPOINT: nowhere,
      },
    },
    'functions/calibration/*': {
      event: {},
      env: {
        ...common,
        REPORT_BUCKET: 'reports',
        HISTORY_TABLE: 'history',
        S3_ENDPOINT: nowhere,
        DYNAMODB_ENDPOINT: nowhere,
        EKS_ENDPOINT: nowhere,
      },
    },
  };
})();

/** The first call of a handler file: its own FIRST_CALLS entry, else its folder's (`<folder>/*`). */
export function firstCallFor(file: string): FirstCall | undefined {
  const slash = file.lastIndexOf('/');
  return FIRST_CALLS[file] ?? (slash === -1 ? undefined : FIRST_CALLS[`${file.slice(0, slash)}/*`]);
}

/** One bundle's figures; `error` instead of figures when it did not build or load. */
export interface BundleResult {
  file: string;
  functions: string[];
  minifiedBytes: number | null;
  gzipBytes: number | null;
  importRuns: number;
  importMedianMs: number | null;
  importMinMs: number | null;
  importMaxMs: number | null;
  /** Functions whose export is not a function after import (Lambda would fail to call them). */
  badExports: string[];
  /**
   * The first call of the bundle's first function with an empty event (median ms, and what it threw): the lazy init
   * (configuration, SDK clients) then the event check. Null when the file has no FIRST_CALL_ENVIRONMENTS entry.
   */
  firstCall: { function: string; medianMs: number; outcome: string } | null;
  largest: Array<{ name: string; bytes: number }>;
  buildMs: number | null;
  error?: string;
}

export interface BundleBenchResult {
  source: StackSource;
  options: ResolvedBundleOptions['options'] & { outputFileExtension: string };
  ignoredOptions: string[];
  bundles: BundleResult[];
  /** The lazy init (configuration, clients) runs on the first call and needs the stack's environment: see the note. */
  firstCallNote: string;
  wallS: number;
}

export interface BundleBenchOptions {
  /** The project root (serverless.yml, functions/). */
  root: string;
  /** Fresh processes per bundle for the import time. Default 5. */
  importRuns?: number;
  log: (line: string) => void;
}

const FIRST_CALL_NOTE =
  'the first call of the first function with an event it refuses, in a placeholder environment (endpoints on a ' +
  'closed local port): the lazy init (configuration, SDK clients) runs, then the handler refuses the event before ' +
  'any AWS call; the outcome is the error it threw. A real first invocation adds its AWS calls (credentials, ' +
  'DescribeCluster, the queries).';

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** The source file of a handler file base (`functions/x/handler` → `.ts`, else `.js`/`.mjs`). */
async function sourceFile(root: string, file: string): Promise<string | undefined> {
  for (const ext of ['.ts', '.mts', '.js', '.mjs']) {
    const path = resolve(root, `${file}${ext}`);
    if (await exists(path)) return path;
  }
  return undefined;
}

/** An esbuild failure's first error with its place (its message only counts them), or the error's first line. */
export function describeFailure(error: unknown): string {
  const e = error as Error & {
    errors?: Array<{ text: string; location?: { file: string; line: number } | null }>;
  };
  const first = e.errors?.[0];
  if (first !== undefined) {
    const where = first.location ? ` (${first.location.file}:${first.location.line})` : '';
    const more = (e.errors?.length ?? 1) > 1 ? ` and ${(e.errors?.length ?? 1) - 1} more` : '';
    return `esbuild: ${first.text}${where}${more}`;
  }
  return `${e.name}: ${e.message.split('\n')[0] ?? ''}`;
}

/** Bundles every handler file of the stack, then measures each bundle. Temp files are removed always. */
export async function benchBundles(options: BundleBenchOptions): Promise<BundleBenchResult> {
  const { root, log } = options;
  const runs = options.importRuns ?? 5;
  const wallStart = performance.now();
  const stack = await readStack(root);
  const groups = groupByFile(stack.functions);
  log(
    `bundles: ${stack.functions.length} functions in ${groups.length} handler files (from ${stack.source.kind}` +
      `${stack.source.reason === undefined ? '' : `: ${stack.source.reason}`})`,
  );
  const outdir = await mkdtemp(join(tmpdir(), 'vllm-pilot-bundles-'));
  const results: BundleResult[] = [];
  try {
    for (const group of groups) {
      const result: BundleResult = {
        file: group.file,
        functions: group.functions.map((f) => f.name),
        minifiedBytes: null,
        gzipBytes: null,
        importRuns: 0,
        importMedianMs: null,
        importMinMs: null,
        importMaxMs: null,
        badExports: [],
        firstCall: null,
        largest: [],
        buildMs: null,
      };
      results.push(result);
      const entry = await sourceFile(root, group.file);
      if (entry === undefined) {
        result.error = `no source file ${group.file}.ts (or .js)`;
        log(`bundles: ${group.file}: ${result.error}`);
        continue;
      }
      const outfile = join(
        outdir,
        `${relative(root, entry)
          .replace(/\.(m?ts|m?js)$/, '')
          .replaceAll('/', '__')}${stack.bundle.outputFileExtension}`,
      );
      try {
        const began = performance.now();
        const built = await build({
          ...stack.bundle.options,
          ...(stack.bundle.ignored.some((i) => i.startsWith('exclude "*"')) ? { packages: 'external' as const } : {}),
          entryPoints: [entry],
          outfile,
          absWorkingDir: isAbsolute(root) ? root : resolve(root),
          metafile: true,
          logLevel: 'silent',
        });
        result.buildMs = performance.now() - began;
        const bytes = await readFile(outfile);
        result.minifiedBytes = bytes.length;
        result.gzipBytes = gzipSync(bytes, { level: 9 }).length;
        result.largest = largestPackages(built.metafile, 3);
        const exports = Object.fromEntries(group.functions.map((f) => [f.name, f.exportPath]));
        const times: number[] = [];
        const firstCalls: number[] = [];
        const outcomes = new Set<string>();
        const firstCall = firstCallFor(group.file);
        for (let i = 0; i < runs; i += 1) {
          const probe = await probeImport(outfile, exports, firstCall);
          times.push(probe.importMs);
          if (probe.firstCall !== undefined) {
            firstCalls.push(probe.firstCall.ms);
            outcomes.add(probe.firstCall.outcome);
          }
          if (i === 0)
            result.badExports = Object.entries(probe.exportTypes)
              .filter(([, type]) => type !== 'function')
              .map(([name, type]) => `${name} (${type})`);
        }
        result.importRuns = times.length;
        result.importMedianMs = quantile(times, 0.5);
        result.importMinMs = Math.min(...times);
        result.importMaxMs = Math.max(...times);
        if (firstCalls.length > 0)
          result.firstCall = {
            function: group.functions[0]?.name ?? '',
            medianMs: quantile(firstCalls, 0.5),
            outcome: [...outcomes].join(' / '),
          };
        log(
          `bundles: ${group.file}: ${result.minifiedBytes} B, ${result.gzipBytes} B gzipped, import median ` +
            `${result.importMedianMs.toFixed(0)} ms`,
        );
      } catch (error) {
        result.error = describeFailure(error);
        log(`bundles: ${group.file}: ${result.error}`);
      }
    }
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
  return {
    source: stack.source,
    options: { ...stack.bundle.options, outputFileExtension: stack.bundle.outputFileExtension },
    ignoredOptions: stack.bundle.ignored,
    bundles: results,
    firstCallNote: FIRST_CALL_NOTE,
    wallS: (performance.now() - wallStart) / 1000,
  };
}
