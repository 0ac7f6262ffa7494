import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import type { Metafile } from 'esbuild';
import { CALIBRATION_STEPS } from '../shared/calibration/workflow/index.js';
import {
  bundleOptionsFrom,
  CREATE_REQUIRE_BANNER,
  describeFailure,
  fallbackFunctions,
  firstCallFor,
  FIRST_CALLS,
  functionsOf,
  groupByFile,
  largestPackages,
  packageOf,
  parseHandler,
  parseProbeOutput,
  readStack,
} from './bundles.js';
import { BenchError } from './errors.js';

describe('Function: parseHandler', () => {
  it.each([
    {
      case: 'a plain handler',
      handler: 'functions/metrics-collector/handler.handler',
      file: 'functions/metrics-collector/handler',
      exportPath: ['handler'],
    },
    {
      case: 'a property of an export',
      handler: 'functions/calibration/lambda.handlers.deploy',
      file: 'functions/calibration/lambda',
      exportPath: ['handlers', 'deploy'],
    },
    { case: 'a file at the root', handler: 'index.main', file: 'index', exportPath: ['main'] },
  ])('splits the file from the export path: $case', ({ handler, file, exportPath }) => {
    // Act
    const ref = parseHandler(handler);

    // Assess
    expect(ref).toEqual({ file, exportPath });
  });

  it.each([
    { case: 'no export', handler: 'functions/x/handler' },
    { case: 'an empty export', handler: 'functions/x/handler.' },
    { case: 'an empty property', handler: 'functions/x/lambda.handlers..deploy' },
    { case: 'a directory only', handler: 'functions/x/.handler' },
  ])('refuses a handler the runtime could not resolve, quoting it: $case', ({ handler }) => {
    // Act
    const act = () => parseHandler(handler);

    // Assess
    expect(act).toThrow(BenchError);
    expect(act).toThrow(JSON.stringify(handler));
  });
});

describe('Function: groupByFile', () => {
  it('makes one bundle per handler file, listing every function that shares it, in first-seen order', () => {
    // Act
    const groups = groupByFile([
      { name: 'collector', handler: 'functions/metrics-collector/handler.handler' },
      { name: 'deploy', handler: 'functions/calibration/lambda.handlers.deploy' },
      { name: 'cleanup', handler: 'functions/calibration/lambda.handlers.cleanup' },
    ]);

    // Assess
    expect(groups).toEqual([
      { file: 'functions/metrics-collector/handler', functions: [{ name: 'collector', exportPath: ['handler'] }] },
      {
        file: 'functions/calibration/lambda',
        functions: [
          { name: 'deploy', exportPath: ['handlers', 'deploy'] },
          { name: 'cleanup', exportPath: ['handlers', 'cleanup'] },
        ],
      },
    ]);
  });
});

describe('Function: fallbackFunctions', () => {
  it('lists the four main functions and one function per calibration task, all in five handler files', () => {
    // Act
    const functions = fallbackFunctions();
    const groups = groupByFile(functions);

    // Assess
    expect(functions.map((f) => f.name)).toEqual(
      expect.arrayContaining(['metricsCollector', 'alertEvaluator', 'slackNotifier', 'preflight']),
    );
    // One bundle per function: each calibration step has its own entry file.
    expect(groups).toHaveLength(4 + Object.keys(CALIBRATION_STEPS).length);
    expect(groups.map((g) => g.file)).toEqual(
      expect.arrayContaining(Object.keys(CALIBRATION_STEPS).map((name) => `functions/calibration/${name}`)),
    );
  });
});

describe('Function: bundleOptionsFrom', () => {
  it("uses the toolchain's options when serverless.yml has no custom.esbuild", () => {
    // Act
    const resolved = bundleOptionsFrom(undefined);

    // Assess
    expect(resolved).toEqual({
      options: {
        bundle: true,
        minify: true,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        banner: { js: CREATE_REQUIRE_BANNER },
      },
      outputFileExtension: '.mjs',
      ignored: [],
    });
  });

  it("applies serverless-esbuild's keys: external and exclude both stay out of the bundle", () => {
    // Act
    const resolved = bundleOptionsFrom({
      minify: false,
      target: 'node22',
      external: ['@aws-sdk/client-sns'],
      exclude: '@aws-sdk/client-s3',
      mainFields: ['module', 'main'],
      outputFileExtension: '.js',
      sourcemap: false,
    });

    // Assess
    expect(resolved.options).toMatchObject({
      minify: false,
      target: 'node22',
      external: ['@aws-sdk/client-sns', '@aws-sdk/client-s3'],
      mainFields: ['module', 'main'],
      sourcemap: false,
      format: 'esm',
    });
    expect(resolved.outputFileExtension).toBe('.js');
    expect(resolved.ignored).toEqual([]);
  });

  it('keeps the default for a value that is still a serverless variable, and reports it and unknown keys', () => {
    // Act
    const resolved = bundleOptionsFrom({ target: '${self:custom.nodeTarget}', packager: 'npm' });

    // Assess
    expect(resolved.options.target).toBe('node20');
    expect(resolved.ignored).toEqual(['packager', 'target (a serverless variable)']);
  });

  it('refuses an external that is not a list of strings, naming the key', () => {
    // Act
    const act = () => bundleOptionsFrom({ external: [1, 2] });

    // Assess
    expect(act).toThrow('custom.esbuild.external');
  });

  it("applies alias as esbuild's (serverless-esbuild passes it through), a path resolved from the project root", () => {
    // Act
    const resolved = bundleOptionsFrom({ alias: { 'whatwg-url': './infra/serverless/esbuild/whatwg-url.js' } });

    // Assess
    expect(resolved.options.alias).toEqual({ 'whatwg-url': './infra/serverless/esbuild/whatwg-url.js' });
    expect(resolved.ignored).toEqual([]);
  });

  it.each([{ alias: ['whatwg-url'] }, { alias: { 'whatwg-url': 1 } }, { alias: null }])(
    'refuses an alias that is not a map of strings: %j',
    (custom) => {
      // Act
      const act = () => bundleOptionsFrom(custom);

      // Assess
      expect(act).toThrow('custom.esbuild.alias');
    },
  );
});

describe('Function: functionsOf', () => {
  it('reads a list of function maps (serverless accepts a list as well as a map)', () => {
    // Act
    const functions = functionsOf([
      { metricsCollector: { handler: 'functions/metrics-collector/handler.handler', timeout: 50 } },
      { calibrationDeploy: { handler: 'functions/calibration/lambda.handlers.deploy' } },
    ]);

    // Assess
    expect(functions).toEqual([
      { name: 'metricsCollector', handler: 'functions/metrics-collector/handler.handler' },
      { name: 'calibrationDeploy', handler: 'functions/calibration/lambda.handlers.deploy' },
    ]);
  });

  it.each([
    {
      case: 'an unresolved handler',
      value: { preflight: { handler: '${self:custom.h}' } },
      message: 'functions.preflight.handler',
    },
    {
      case: 'an unresolved list entry',
      value: ['${file(stack.cjs):calibrationFunctions}'],
      message: 'a map of function name',
    },
    { case: 'no function', value: {}, message: 'no function' },
  ])('refuses what it cannot bundle, saying what: $case', ({ value, message }) => {
    // Act
    const act = () => functionsOf(value);

    // Assess
    expect(act).toThrow(message);
  });
});

describe('Function: readStack', () => {
  it('falls back to the built-in list and the toolchain options when there is no serverless.yml, saying so', async () => {
    // Prepare
    const root = await mkdtemp(join(tmpdir(), 'bench-stack-'));

    try {
      // Act
      const stack = await readStack(root);

      // Assess
      expect(stack.source).toEqual({ kind: 'fallback', reason: 'no serverless.yml yet', esbuildFromFile: false });
      expect(stack.functions).toEqual(fallbackFunctions());
      expect(stack.bundle.outputFileExtension).toBe('.mjs');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('Function: packageOf', () => {
  it.each([
    { case: 'a scoped package', path: 'node_modules/@smithy/core/dist-es/index.js', name: '@smithy/core' },
    { case: 'a plain package', path: 'node_modules/zod/v4/core/core.js', name: 'zod' },
    { case: 'a nested dependency', path: 'node_modules/a/node_modules/tr46/index.js', name: 'tr46' },
    { case: 'project code', path: 'shared/metrics/ampClient.ts', name: '(project)' },
  ])('names the npm package of an input: $case', ({ path, name }) => {
    // Act / Assess
    expect(packageOf(path)).toBe(name);
  });
});

describe('Function: largestPackages', () => {
  it('sums the bytes each package puts in the output and lists the heaviest first', () => {
    // Prepare
    const input = (bytesInOutput: number) => ({ bytesInOutput });
    const metafile = {
      inputs: {},
      outputs: {
        'out.mjs': {
          bytes: 0,
          imports: [],
          exports: [],
          inputs: {
            'node_modules/zod/a.js': input(300),
            'node_modules/zod/b.js': input(300),
            'node_modules/@smithy/core/a.js': input(500),
            'functions/x/handler.ts': input(10),
          },
        },
      },
    } as unknown as Metafile;

    // Act
    const largest = largestPackages(metafile, 2);

    // Assess
    expect(largest).toEqual([
      { name: 'zod', bytes: 600 },
      { name: '@smithy/core', bytes: 500 },
    ]);
  });
});

describe('Function: parseProbeOutput', () => {
  it("finds the probe's result among the handler's own log lines", () => {
    // Prepare
    const out = [
      '{"level":"ERROR","message":"configuration rejected"}',
      'BENCH_PROBE {"importMs":12.5,"exportTypes":{"a":"function"},"firstCall":{"ms":3,"outcome":"XError"}}',
      '',
    ].join('\n');

    // Act
    const probe = parseProbeOutput(out);

    // Assess
    expect(probe).toEqual({ importMs: 12.5, exportTypes: { a: 'function' }, firstCall: { ms: 3, outcome: 'XError' } });
  });

  it('refuses output without a result line, quoting its end', () => {
    // Act
    const act = () => parseProbeOutput('something else');

    // Assess
    expect(act).toThrow(BenchError);
    expect(act).toThrow('something else');
  });
});

describe('Function: describeFailure', () => {
  it("names esbuild's first error, where it is, and how many more there are", () => {
    // Prepare
    const failure = Object.assign(new Error('Build failed with 2 errors'), {
      errors: [
        { text: 'Could not resolve "./registry.js"', location: { file: 'shared/preflight/run.ts', line: 1 } },
        { text: 'other', location: null },
      ],
    });

    // Act
    const text = describeFailure(failure);

    // Assess
    expect(text).toBe('esbuild: Could not resolve "./registry.js" (shared/preflight/run.ts:1) and 1 more');
  });
});

describe('Function: firstCallFor', () => {
  it("uses a file's own entry, else its folder's `<folder>/*` entry (each calibration step's file)", () => {
    // Act
    const preflight = firstCallFor('functions/preflight/handler');
    const deploy = firstCallFor('functions/calibration/deploy');
    const unknown = firstCallFor('functions/unknown/handler');

    // Assess
    expect(preflight).toBe(FIRST_CALLS['functions/preflight/handler']);
    expect(deploy).toBe(FIRST_CALLS['functions/calibration/*']);
    expect(deploy?.env.REPORT_BUCKET).toBe('reports');
    expect(unknown).toBeUndefined();
  });
});
