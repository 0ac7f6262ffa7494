import { createDefaultEsmPreset } from 'ts-jest';

// Two projects: `unit` (beside the code, no processes, virtual clock) and `integration` (test/, starts the twin
// and the real Prometheus). `npm run test:unit` / `npm run test:integration` select one. test/long/ holds tests that
// run the guide's real timings (many minutes): only `npm run test:long` runs them (jest.long.config.js).
const preset = createDefaultEsmPreset({ tsconfig: 'tsconfig.json' });
const common = {
  ...preset,
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/setup-polyfills.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

export { common };

export default {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{shared,sim,functions,cli,bench}/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/long/'],
    },
  ],
};
