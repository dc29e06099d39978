import { PassThrough } from 'node:stream';
import { createClient, dehydrate } from '@keel/core';
import { isNoServerDataError } from '@keel/react';
import { renderToPipeableStream } from 'react-dom/server';
import { Root, STATE_GLOBAL } from '../src/Root';

/** The header the page's server-side reads carry, so the API can tell them from the browser's. */
export const RENDER_HEADER = 'x-keel-render';

/** How long the server waits for each read before it leaves that data to the browser. */
export const RENDER_READ_TIMEOUT_MS = 2000;

export interface RenderTarget {
  /** The built index.html; the page goes where it says `<!--app-->`. */
  template: string;
  /** The API as this process reaches it (an internal address, not the page's origin). */
  apiBase: string;
  /**
   * Aborted when the browser goes away: the reads are cancelled and nothing more is rendered
   * (the render resolves without writing the rest).
   */
  signal?: AbortSignal;
  /** How long each read may take (default RENDER_READ_TIMEOUT_MS). */
  readTimeoutMs?: number;
  /** Where the HTML goes. */
  write(chunk: string): void;
  end(): void;
  /** Called before the first write. */
  start(status: number): void;
}

/**
 * Renders the page on the server with renderToPipeableStream: reads what it shows through a
 * server client on the API's internal address, renders with that data, and streams the HTML
 * with the client's cache (dehydrated) for the browser to hydrate without asking again. The
 * cache keys do not depend on the origin, so the browser's client (on `/api`) finds them.
 * A read that fails on the server, or takes longer than RENDER_READ_TIMEOUT_MS, is left to the
 * browser (its suspense boundary renders there).
 */
export async function renderPage(target: RenderTarget): Promise<void> {
  const client = createClient({
    baseURL: target.apiBase,
    retry: false,
    // A store that hangs must not hang every page load: a read slower than this is left to the
    // browser, like one that fails (the page is sent with its loading state).
    timeout: target.readTimeoutMs ?? RENDER_READ_TIMEOUT_MS,
    headers: { [RENDER_HEADER]: '1' },
  });
  const { signal } = target;
  await Promise.allSettled([client.get('/todos', { signal }), client.get('/stats', { signal })]);
  if (signal?.aborted) return;
  const state = dehydrate(client);
  const [head, tail] = target.template.split('<!--app-->') as [string, string];
  // In a <script>: JSON with `<` escaped cannot close the element.
  const script = `<script>window.${STATE_GLOBAL}=${JSON.stringify(state).replace(/</g, '\\u003c')}</script>`;
  await new Promise<void>((resolve, reject) => {
    const stop = () => {
      stream.abort();
      resolve();
    };
    const settle = (done: () => void) => {
      signal?.removeEventListener('abort', stop);
      done();
    };
    const stream = renderToPipeableStream(<Root client={client} state={state} />, {
      onShellReady() {
        target.start(200);
        target.write(head);
        const html = new PassThrough();
        html.on('data', (chunk: Buffer) => target.write(chunk.toString()));
        html.on('end', () => {
          if (signal?.aborted) return;
          target.write(tail.replace('</body>', `${script}</body>`));
          target.end();
          settle(resolve);
        });
        stream.pipe(html);
      },
      onShellError: (error) => settle(() => reject(error)),
      onError(error) {
        // A suspense query with nothing cached on the server: React renders it in the browser.
        // After an abort, React reports the abort itself: the browser is gone, nothing to say.
        if (isNoServerDataError(error) || signal?.aborted) return;
        console.error(error);
      },
    });
    signal?.addEventListener('abort', stop, { once: true });
  });
}
