import { availableParallelism } from 'node:os';
import { createDefaultEsmPreset } from 'ts-jest';

// Three projects: `unit` (beside the product's code: shared/, functions/, cli/, bench/, infra/), `twin` (the twin's
// own tests, beside its code in sim/: servers, controllers, the real Prometheus) and `integration` (test/: the
// product against the twin). `npm run test:unit`, `test:twin` and `test:integration` select one. test/long/ holds
// tests that run the guide's real timings (many minutes): only `npm run test:long` runs them (jest.long.config.js).
const preset = createDefaultEsmPreset({ tsconfig: 'tsconfig.json' });
const common = {
  ...preset,
  testEnvironment: 'node',
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

export { common };

export default {
  // One file per core. The integration and twin tests mostly wait on the clock (real-time twins, Prometheus scrapes,
  // KEDA's windows), but three files at once on two cores starved them now and then: three CI runs in a row each
  // failed one timing-bound test (a twin's load rate 49 of 63 req/s, a KEDA phase at 5 Pods instead of 2, a calibration step
  // read stable with 16.9 of 40 req/s completed).
  maxWorkers: Math.max(2, availableParallelism()),
  // Files that start a twin first, so the run does not wait on them at its end (test/sequencer.js).
  testSequencer: '<rootDir>/test/sequencer.js',
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{shared,functions,cli,bench,infra}/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'twin',
      testMatch: ['<rootDir>/sim/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/long/'],
    },
  ],
};
