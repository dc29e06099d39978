// @vitest-environment node
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultsOf, optionDocProblems, optionTypes } from '../../../scripts/option-docs.mjs';
import { DEVTOOLS_DEFAULTS } from '../src/panel/devtools';

const SRC = join(import.meta.dirname, '..', 'src');

describe('option docs: an editor hover is the manual (issue #14, item 2)', () => {
  const types = optionTypes(SRC, (name) => name === 'KeelDevtoolsProps');

  it('every prop has a JSDoc sentence and a @default, and each @default is the one applied', () => {
    expect([...types.keys()]).toEqual(['KeelDevtoolsProps']);
    expect(optionDocProblems(types, defaultsOf('KeelDevtoolsProps', DEVTOOLS_DEFAULTS))).toEqual(
      [],
    );
  });
});
