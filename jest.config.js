// Jest runs TypeScript through SWC as native ES modules (see docs/decisions.md).
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'es6' } },
    ],
  },
  testMatch: ['<rootDir>/services/**/*.test.ts', '<rootDir>/gateway/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // A test that starts servers, programs or a browser names its own timeout; hooks get theirs in hook-timeout.ts.
  testTimeout: 20000,
  setupFilesAfterEnv: ['<rootDir>/test/support/hook-timeout.ts'],
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
