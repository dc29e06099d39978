import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

// Test layout (see test/README.md): unit tests of one module sit next to it (src/x.test.ts);
// tests through an app, a socket or a real service live in test/, attacker-written ones in
// test/adversarial/, type tests of the public generics in test/*.test-d.ts.
export default defineConfig({
  test: {
    name: 'server',
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // In Chromium: vitest.browser.config.ts, run by `test:e2e`.
    exclude: [...configDefaults.exclude, 'test/browser/**'],
    // Type tests: checked by tsc (vitest typecheck), never run.
    typecheck: {
      enabled: true,
      include: ['test/**/*.test-d.ts'],
      tsconfig: fileURLToPath(new URL('./tsconfig.typecheck.json', import.meta.url)),
    },
  },
});
