// ctx.cacheControl: a directive asked for is sent or refused, never dropped. `{ private: true,
// maxAge: 60 }` sent `max-age=60` alone, which lets a shared cache keep a per-user response.
import { describe, expect, it } from 'vitest';
import type { CacheControlOptions, Context } from '../src/index';
import { raw, start, trackApps } from './helpers';

const createApp = trackApps();

/** The Cache-Control a real request gets for `options`, or the error the handler threw. */
async function sent(options: CacheControlOptions): Promise<string | Error | undefined> {
  const app = createApp();
  let thrown: Error | undefined;
  app.onError((err) => {
    thrown = err as Error;
  });
  app.get('/c', (ctx: Context) => ctx.cacheControl(options).json({}));
  const { port } = await start(app);
  const res = await raw(port, { path: '/c' });
  if (thrown !== undefined) {
    expect(res.status).toBe(500);
    return thrown;
  }
  expect(res.status).toBe(200);
  return res.headers['cache-control'];
}

describe('ctx.cacheControl directives', () => {
  const cases: [CacheControlOptions, string][] = [
    [{ private: true, maxAge: 60 }, 'private, max-age=60'],
    [{ private: false, maxAge: 60 }, 'max-age=60'],
    [{ noCache: true }, 'no-cache'],
    [{ private: true, noCache: true }, 'private, no-cache'],
    [{ maxAge: 0, mustRevalidate: true }, 'max-age=0, must-revalidate'],
    [{ sMaxAge: 60, proxyRevalidate: true }, 's-maxage=60, proxy-revalidate'],
    [{ public: true, maxAge: 60, noTransform: true }, 'public, max-age=60, no-transform'],
    [
      {
        public: true,
        noCache: true,
        maxAge: 1,
        sMaxAge: 2,
        mustRevalidate: true,
        proxyRevalidate: true,
        noTransform: true,
        staleWhileRevalidate: 3,
        staleIfError: 4,
        immutable: true,
      },
      'public, no-cache, max-age=1, s-maxage=2, must-revalidate, proxy-revalidate, no-transform, ' +
        'stale-while-revalidate=3, stale-if-error=4, immutable',
    ],
    // no-store still stands alone: nothing else matters for a response that is never stored.
    [{ noStore: true, private: true, noCache: true, maxAge: 5 }, 'no-store'],
  ];
  for (const [options, header] of cases) {
    it(`${JSON.stringify(options)} -> ${header}`, async () => {
      expect(await sent(options)).toBe(header);
    });
  }

  it('an unknown key is a RangeError naming it, not a header without it', async () => {
    for (const key of ['privat', 'maxage', 'max-age', 'sharedMaxAge']) {
      const err = await sent({ maxAge: 60, [key]: true } as CacheControlOptions);
      expect(err).toBeInstanceOf(RangeError);
      expect((err as Error).message).toContain(`\`cacheControl options\` must be`);
      expect((err as Error).message).toContain(`got ${JSON.stringify(key)}`);
      expect((err as Error).message).toContain('private');
    }
  });

  it('a new flag that is no boolean is a TypeError naming it', async () => {
    for (const key of ['private', 'noCache', 'mustRevalidate', 'proxyRevalidate', 'noTransform']) {
      const err = await sent({ maxAge: 1, [key]: 'true' } as CacheControlOptions);
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toContain(`\`cacheControl ${key}\` must be true or false`);
    }
  });

  it('durations are checked beside noStore too, as the flags are', async () => {
    const err = await sent({ noStore: true, maxAge: -1 });
    expect(err).toBeInstanceOf(RangeError);
    expect((err as Error).message).toContain('`cacheControl maxAge`');
  });

  it('public and private together is a RangeError (one of them is a mistake)', async () => {
    const err = await sent({ public: true, private: true, maxAge: 60 });
    expect(err).toBeInstanceOf(RangeError);
    expect((err as Error).message).toContain('`cacheControl private`');
    // `public: false` already means private: `private: false` beside it contradicts it.
    expect(await sent({ public: false, private: false })).toBeInstanceOf(RangeError);
    expect(await sent({ public: false, private: true })).toBe('private');
  });
});
