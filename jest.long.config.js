import { common } from './jest.config.js';

// The long tests: the guide's plan with its real holds and rests (about 12 minutes). `npm run test:long`.
export default {
  projects: [{ ...common, displayName: 'long', testMatch: ['<rootDir>/test/long/**/*.test.ts'] }],
};
