import { defineConfig } from 'vitest/config';

/**
 * Three projects: `unit` (in-process, plus the local cloud's own tests, which start
 * emulators), `integration` (HTTP against one shared local cloud in memory mode) and
 * `cdk` (template assertions; synthesis is slow). `vitest run --project unit` runs one.
 */
export default defineConfig({
  test: {
    // Node 20.19 is supported (CONTRACT.md); the AWS SDK's notice about its future support is noise here.
    // Metrics of work a test runs in its own process are noise on its output; the local
    // cloud's functions (another process, their own environment) still emit theirs.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_METRICS_DISABLED: 'true' },
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          // Also the setup file: its local-only guard runs before every test file, even
          // one that does not import it.
          setupFiles: ['test/integration/support.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: { name: 'cdk', include: ['test/cdk/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
      },
    ],
  },
});
