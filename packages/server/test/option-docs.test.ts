import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { optionDocProblems, optionTypes } from '../../../scripts/option-docs.mjs';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
/** The public option types that are not named `...Options`. */
const ALSO = new Set(['ServerTimeouts', 'BodyParsers', 'Rule', 'InjectRequest']);

describe('option docs: an editor hover is the manual', () => {
  const types = optionTypes(SRC, (name) => name.endsWith('Options') || ALSO.has(name));

  it('finds the public option types', () => {
    for (const name of [
      'AppOptions',
      'ServerTimeouts',
      'CloseOptions',
      'RouteOptions',
      'BodyParsers',
      'SseOptions',
      'GraphqlOptions',
      'CompressionOptions',
      'CorsOptions',
      'CacheControlOptions',
      'CookieOptions',
      'SendFileOptions',
      'EventHubOptions',
      'ConnectOptions',
      'PublishOptions',
      'InvalidateOptions',
      'MemoryStoreOptions',
      'RedisStreamsOptions',
      'HttpExceptionOptions',
      'BadRequestErrorOptions',
      'Rule',
      'InjectRequest',
    ]) {
      expect(types.has(name), name).toBe(true);
    }
  });

  it('every field has a JSDoc sentence, every optional one a @default', () => {
    expect(optionDocProblems(types)).toEqual([]);
  });
});
