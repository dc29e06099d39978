import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

// Testing Library registers its own cleanup only when test globals are enabled; they are not.
afterEach(() => {
  cleanup();
});
