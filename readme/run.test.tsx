// @vitest-environment jsdom
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { act } from '@testing-library/react';
import { setupServer } from 'msw/node';
import { createRoot, type Root } from 'react-dom/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exampleApis } from './apis';
import { blocksOf, isCode, moduleOf, READMES } from './blocks';

const server = setupServer(...exampleApis());
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

/** Where the runnable modules are written (ignored by git). */
const RUNS = join(import.meta.dirname, '.generated', 'run');

const runnable = READMES.flatMap((readme) => {
  const blocks = blocksOf(readme);
  const context = blocks.find((b) => b.context);
  return blocks
    .filter(isCode)
    .map((block, i) => ({ block, module: moduleOf(block, context, i) }))
    .filter(({ block }) => block.meta.includes('run'));
});

/** Lets timers, fetches and React's batched renders run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
    });
  }
}

describe('runnable README blocks', () => {
  it('there are some', () => {
    expect(runnable.map(({ block }) => `${block.readme}:${block.line}`)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^packages\/react\/README\.md:/)]),
    );
  });

  it.each(runnable.map((r) => [`${r.block.readme}:${r.block.line}`, r] as const))(
    '%s runs: no throw, no error logged, no unhandled rejection; what it renders is not blank',
    async (_, { module }) => {
      mkdirSync(RUNS, { recursive: true });
      const file = join(RUNS, module.name);
      writeFileSync(file, module.source);
      // What a README's context declares for its blocks to render into.
      const container = document.body.appendChild(document.createElement('div'));
      const root: Root = createRoot(container);
      (globalThis as { root?: Root }).root = root;
      const errors = vi.spyOn(console, 'error');
      const rejections: unknown[] = [];
      const onRejection = (reason: unknown) => rejections.push(reason);
      process.on('unhandledRejection', onRejection);
      try {
        await act(async () => {
          await import(/* @vite-ignore */ pathToFileURL(file).href);
        });
        await settle();
        expect(errors).not.toHaveBeenCalled();
        expect(rejections).toEqual([]);
        if (container.childNodes.length > 0) {
          // The first page is not blank: it shows data, not a spinner or an error.
          expect(container.textContent).not.toMatch(/^\s*$|Loading|Failed/);
        }
      } finally {
        process.off('unhandledRejection', onRejection);
        errors.mockRestore();
        act(() => root.unmount());
        container.remove();
        delete (globalThis as { root?: Root }).root;
      }
    },
  );
});
