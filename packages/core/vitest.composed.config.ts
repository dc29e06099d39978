import { defineConfig } from 'vitest/config';

// The client suites again, against createBaseClient given every feature by its with...()
// function instead of createClient (test/helpers.ts composedClient): one client underneath,
// held to the same behaviour whichever way it is built.
export default defineConfig({
  test: {
    name: 'core-composed',
    environment: 'node',
    env: { KEEL_CLIENT: 'composed' },
    include: [
      'test/pipeline.*.test.ts',
      'test/circuit.*.test.ts',
      'test/scheduler.control.test.ts',
      'test/scheduler.circuit.test.ts',
      'test/scheduler.audit.test.ts',
      'test/adaptive.test.ts',
      'test/adaptive-timeout.test.ts',
      'test/adaptive.audit.test.ts',
      'test/spec-conformance.*.test.ts',
      'test/spec-conformance.test.ts',
      'test/deadline.test.ts',
      'test/leaks.test.ts',
      'test/resilience.audit.test.ts',
      'test/resilience.audit2.test.ts',
      'test/resilience.audit3.test.ts',
      'test/reentrant.fuzz.test.ts',
      'test/chaos/pipeline.chaos.test.ts',
    ],
  },
});
