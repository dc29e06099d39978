import { cleanup } from '@testing-library/react';
import { afterEach, vi } from 'vitest';

// Testing Library registers its own cleanup only when test globals are enabled; they are not.
afterEach(() => {
  cleanup();
  // Spies (watchConsoleErrors) end with their test.
  vi.restoreAllMocks();
});
