import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { buildQuery } from '../request/query';
import {
  canonicalizeURL,
  originOf,
  parseCanonical,
  resolveCanonical,
  resolveURL,
  splitCanonical,
} from './url';

describe('resolveURL', () => {
  test('absolute URLs are returned unchanged, base ignored', () => {
    expect(resolveURL('https://other.test/x', 'https://api.test/v1')).toBe('https://other.test/x');
  });

  test('keeps the base path (unlike new URL(url, base))', () => {
    expect(resolveURL('/users', 'https://api.test/v1')).toBe('https://api.test/v1/users');
    expect(resolveURL('/users', 'https://api.test/v1/')).toBe('https://api.test/v1/users');
    expect(resolveURL('users', 'https://api.test/v1')).toBe('https://api.test/v1/users');
    expect(resolveURL('users', 'https://api.test/v1/')).toBe('https://api.test/v1/users');
  });

  test('query-only and empty URLs attach to the base', () => {
    expect(resolveURL('?a=1', 'https://api.test/v1')).toBe('https://api.test/v1?a=1');
    expect(resolveURL('', 'https://api.test/v1')).toBe('https://api.test/v1');
  });

  test('a relative URL without a base is a RangeError naming the URL', () => {
    expect(() => resolveURL('/users')).toThrow(RangeError);
    expect(() => resolveURL('/users')).toThrow(/\/users/);
  });

  test('a relative base is a TypeError naming baseURL', () => {
    expect(() => resolveURL('/x', 'api.test')).toThrow(/baseURL/);
  });

  test('a non-string URL is a TypeError', () => {
    expect(() => resolveURL(42 as unknown as string)).toThrow(TypeError);
  });
});

describe('canonicalizeURL', () => {
  test('sorts query parameters by name, stable for repeated keys', () => {
    expect(canonicalizeURL('https://a.test/x?b=2&a=1&b=1')).toBe('https://a.test/x?a=1&b=2&b=1');
  });

  test('drops the fragment', () => {
    expect(canonicalizeURL('https://a.test/x?a=1#frag')).toBe('https://a.test/x?a=1');
    expect(canonicalizeURL('https://a.test/x#frag')).toBe('https://a.test/x');
  });

  test('lower-cases scheme and host, keeps path case', () => {
    expect(canonicalizeURL('HTTPS://API.Example.COM/Users')).toBe('https://api.example.com/Users');
  });

  test('drops the default port, keeps another', () => {
    expect(canonicalizeURL('https://a.test:443/x')).toBe('https://a.test/x');
    expect(canonicalizeURL('http://a.test:80/x')).toBe('http://a.test/x');
    expect(canonicalizeURL('http://a.test:8080/x')).toBe('http://a.test:8080/x');
  });

  test('resolves dot segments', () => {
    expect(canonicalizeURL('https://a.test/a/./b/../c')).toBe('https://a.test/a/c');
  });

  test('an empty query is the same URL as no query', () => {
    expect(canonicalizeURL('https://a.test/x?')).toBe(canonicalizeURL('https://a.test/x'));
  });

  test('spaces encode as %20 whether written as + or %20', () => {
    expect(canonicalizeURL('https://a.test/x?q=a+b')).toBe('https://a.test/x?q=a%20b');
    expect(canonicalizeURL('https://a.test/x?q=a%20b')).toBe('https://a.test/x?q=a%20b');
  });

  test('an invalid URL is a RangeError naming it', () => {
    expect(() => canonicalizeURL('http://')).toThrow(RangeError);
    expect(() => canonicalizeURL('http://[bad/x')).toThrow(/http:\/\/\[bad\/x/);
  });

  test('a relative URL stays relative: path-absolute, path-relative, query only', () => {
    expect(canonicalizeURL('not a url')).toBe('not%20a%20url');
    expect(canonicalizeURL('/p/../q?z=1&a=2#f')).toBe('/q?a=2&z=1');
    expect(canonicalizeURL('p/q?z=1&a=2')).toBe('p/q?a=2&z=1');
    expect(canonicalizeURL('?z=1&a=2')).toBe('?a=2&z=1');
    expect(canonicalizeURL('')).toBe('');
    expect(canonicalizeURL('/')).toBe('/');
    // Protocol-relative names a host without a scheme: not canonical without one.
    expect(() => canonicalizeURL('//a.test/x')).toThrow(RangeError);
  });

  test('parseCanonical splits path and host and memoizes', () => {
    const a = parseCanonical('https://A.test:443/p/q?z=1&a=2#x');
    expect(a).toEqual({
      href: 'https://a.test/p/q?a=2&z=1',
      pathname: '/p/q',
      host: 'a.test',
      sent: 'https://a.test/p/q?z=1&a=2',
    });
    expect(parseCanonical('https://A.test:443/p/q?z=1&a=2#x')).toBe(a);
  });

  const param = fc.oneof(fc.string(), fc.integer(), fc.boolean());
  const params = fc.dictionary(
    fc.string({ minLength: 1, maxLength: 8 }),
    fc.oneof(param, fc.array(param, { maxLength: 3 })),
  );
  const path = fc.array(fc.webSegment(), { maxLength: 4 }).map((s) => `/${s.join('/')}`);

  test('property: canonicalization is idempotent', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
        const once = canonicalizeURL(url);
        expect(canonicalizeURL(once)).toBe(once);
      }),
    );
  });

  test('property: query order does not change the canonical URL, values survive', () => {
    fc.assert(
      fc.property(path, params, (p, ps) => {
        const keys = Object.keys(ps);
        const reversed = Object.fromEntries(keys.reverse().map((k) => [k, ps[k]]));
        const a = canonicalizeURL(`https://a.test${p}?${buildQuery(ps)}`);
        const b = canonicalizeURL(`https://a.test${p}?${buildQuery(reversed)}`);
        expect(a).toBe(b);
        // Round trip: the multiset of (key, value) pairs is unchanged by canonicalization.
        const pairs = (u: string) =>
          [...new URL(u).searchParams.entries()].map(([k, v]) => `${k}=${v}`).sort();
        expect(pairs(a)).toEqual(pairs(`https://a.test${p}?${buildQuery(ps)}`));
      }),
    );
  });
});

describe('canonicalizeURL fast path', () => {
  /** The canonical form as computed before the fast path: always sort and re-serialize. */
  function reference(url: string): string {
    const u = new URL(url);
    u.hash = '';
    if (u.search === '') u.search = '';
    else {
      u.searchParams.sort();
      u.search = u.searchParams.toString().replace(/\+/g, '%20');
    }
    return u.href;
  }

  test('a query already canonical is kept; any other is sorted and re-serialized', () => {
    expect(canonicalizeURL('https://a.test/x?a=1&b=2&b=1')).toBe('https://a.test/x?a=1&b=2&b=1');
    expect(canonicalizeURL('https://a.test/x?a=1&B=2')).toBe('https://a.test/x?B=2&a=1');
    expect(canonicalizeURL('https://a.test/x?a=x+y')).toBe('https://a.test/x?a=x%20y');
    expect(canonicalizeURL('https://a.test/x?a')).toBe('https://a.test/x?a=');
    expect(canonicalizeURL('https://a.test/x?a=1&&b=2')).toBe('https://a.test/x?a=1&b=2');
    expect(canonicalizeURL('https://a.test/x?a=b=c')).toBe('https://a.test/x?a=b%3Dc');
    expect(canonicalizeURL('https://a.test/x?a=%41')).toBe('https://a.test/x?a=A');
    expect(canonicalizeURL('https://a.test/x?')).toBe('https://a.test/x');
    expect(canonicalizeURL('https://a.test/x#')).toBe('https://a.test/x');
  });

  test('matches always sorting and re-serializing (property)', () => {
    const chars = fc.constantFrom(...'aAbB_z09.*-~+%=&? #/\u00e9'.split(''));
    const part = fc.array(chars, { maxLength: 6 }).map((c) => c.join(''));
    const query = fc.array(part, { maxLength: 5 }).map((ps) => ps.join('&'));
    fc.assert(
      fc.property(query, fc.boolean(), (q, hasQuery) => {
        const url = `https://a.test/p${hasQuery ? `?${q}` : q.replace(/[?#]/g, '')}`;
        expect(canonicalizeURL(url)).toBe(reference(url));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
        expect(canonicalizeURL(url)).toBe(reference(url));
      }),
    );
  });
});

describe('splitCanonical: URLs recognised as canonical without parsing', () => {
  /** What parsing says: the canonical href and its parts. */
  function parsed(url: string) {
    const u = new URL(canonicalizeURL(url));
    // A canonical URL is sent as it is: no `sent` of its own.
    return { href: u.href, pathname: u.pathname, host: u.hostname };
  }

  test('a plain URL is split as parsing would split it', () => {
    for (const url of [
      'https://api.test/items?i=1',
      'http://localhost:8080/a/b/',
      'https://a-b.c.example/x//y;z=1/%41?a=1&a=0&b=x.y*z-_',
      "https://a.test/a'b(c)*!$&+,;=:@~",
    ]) {
      expect(splitCanonical(url)).toEqual(parsed(url));
    }
  });

  test('anything parsing would change, or that needs a closer look, is left to the parser', () => {
    for (const url of [
      'https://api.test', // no path: serialized with "/"
      'HTTPS://api.test/x',
      'https://API.test/x',
      'https://api.test:443/x', // default port
      'http://api.test:80/x',
      'http://api.test:08080/x',
      'http://api.test:65536/x',
      'http://127.0.0.1/x', // IPv4
      'http://a.0x7f/x',
      'http://xn--nxasmq6b.test/x', // punycode
      'https://a.test/a/./b',
      'https://a.test/a/../b',
      'https://a.test/a/%2E%2e/b',
      'https://a.test/a/.%2e',
      'https://a.test/%zz',
      'https://a.test/a b',
      'https://a.test/x?b=1&a=2', // unsorted
      'https://a.test/x?a',
      'https://a.test/x?',
      'https://a.test/x#f',
      'https://user@a.test/x',
      'ftp://a.test/x',
      'https://a.test/\u00e9',
    ]) {
      expect(splitCanonical(url), url).toBeUndefined();
    }
  });

  test('property: whenever it answers, parsing agrees', () => {
    const pick = (chars: string, max: number) =>
      fc.array(fc.constantFrom(...chars.split('')), { maxLength: max }).map((c) => c.join(''));
    // Mostly plain parts, sometimes the characters that make parsing change a URL.
    const mixed = (plain: string, risky: string, max: number) =>
      fc.oneof(
        { weight: 3, arbitrary: pick(plain, max) },
        { weight: 1, arbitrary: pick(risky, max) },
      );
    const host = fc
      .array(fc.tuple(fc.constantFrom('a', 'b', 'x', '0'), mixed('ab0-', 'ab0-x.nA_', 4)), {
        minLength: 1,
        maxLength: 3,
      })
      .map((labels) => labels.map(([first, rest]) => first + rest).join('.'));
    const port = fc.oneof(
      fc.constant(''),
      fc.integer({ min: 0, max: 70000 }).map((n) => `:${n}`),
    );
    const path = mixed("aZ09/_~!$&()*+,;=:@-'", 'a/.%2eE \\é?#', 12);
    const pair = fc
      .tuple(pick('ab.*-_', 3), pick('ab.*-_', 3))
      .map(([name, value]) => `${name}=${value}`);
    const query = fc.oneof(
      { weight: 3, arbitrary: fc.array(pair, { maxLength: 3 }).map((ps) => ps.join('&')) },
      { weight: 1, arbitrary: pick('ab=&+%B', 10) },
    );
    let answered = 0;
    fc.assert(
      fc.property(
        fc.constantFrom('http', 'https'),
        host,
        port,
        path,
        fc.option(query),
        (scheme, h, p, pa, q) => {
          const url = `${scheme}://${h}${p}/${pa}${q === null ? '' : `?${q}`}`;
          const fast = splitCanonical(url);
          if (fast === undefined) return;
          answered++;
          expect(fast).toEqual(parsed(url));
          expect(new URL(url).href).toBe(url);
        },
      ),
      { numRuns: 5000 },
    );
    // The generator must reach the fast path often enough for the property to mean something.
    expect(answered).toBeGreaterThan(400);
  });
});

describe('resolveCanonical: a URL on a base, with params', () => {
  /** The long way: resolved, fragment dropped, params after the URL's own query, then parsed. */
  function reference(url: string, base: string, query: string) {
    const resolved = resolveURL(url, base);
    const r = resolved.split('#', 1)[0]!;
    const p = parseCanonical(query ? `${r}${r.includes('?') ? '&' : '?'}${query}` : resolved);
    return { href: p.href, pathname: p.pathname, host: p.host, sent: p.sent ?? p.href };
  }
  const parts = (p: ReturnType<typeof resolveCanonical>) => ({
    href: p.href,
    pathname: p.pathname,
    host: p.host,
    sent: p.sent ?? p.href,
  });

  test('params go after the query of a plain path, and are sorted in with it', () => {
    expect(resolveCanonical('/x?a=1', 'https://api.test/v1/', 'q=1')).toEqual({
      href: 'https://api.test/v1/x?a=1&q=1',
      pathname: '/v1/x',
      host: 'api.test',
    });
    expect(parts(resolveCanonical('/x?z=1', 'https://api.test', 'q=1'))).toEqual({
      href: 'https://api.test/x?q=1&z=1',
      pathname: '/x',
      host: 'api.test',
      sent: 'https://api.test/x?z=1&q=1',
    });
    expect(resolveCanonical('/x', 'https://api.test', 'q=1').href).toBe('https://api.test/x?q=1');
  });

  test('property: the same parts as resolving the whole URL and parsing it', () => {
    const base = fc.constantFrom(
      'https://api.test',
      'https://api.test/',
      'https://api.test/v1',
      'https://api.test/v1/',
      'http://API.test:80/v1/',
      'https://api.test/v1?key=1',
      'https://api.test/v1#h',
    );
    const pick = (chars: string, max: number) =>
      fc.array(fc.constantFrom(...chars.split('')), { maxLength: max }).map((c) => c.join(''));
    const path = fc.oneof(
      { weight: 4, arbitrary: pick('ab/', 6).map((p) => `/${p}`) },
      { weight: 1, arbitrary: pick('ab/.%2 #?', 6) },
    );
    const pair = fc.tuple(pick('abz', 2), pick('ab ', 2)).map(([n, v]) => `${n}=${v}`);
    const own = fc.oneof(
      fc.constant(''),
      fc.array(pair, { maxLength: 2 }).map((ps) => `?${ps.join('&')}`),
      fc.constantFrom('?', '#f', '?a=1#f'),
    );
    const params = fc.oneof(
      fc.constant(''),
      fc.array(pair, { minLength: 1, maxLength: 2 }).map((ps) => encodeURI(ps.join('&'))),
    );
    fc.assert(
      fc.property(base, path, own, params, (b, p, o, q) => {
        expect(parts(resolveCanonical(p + o, b, q))).toEqual(reference(p + o, b, q));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('originOf', () => {
  test('is the WHATWG origin of any canonical URL, in any order', () => {
    const hosts = fc.constantFrom(
      'a.test',
      'a.test:8080',
      'a.tes',
      'a.test.evil',
      'B.test',
      '127.0.0.1',
    );
    const url = fc
      .tuple(fc.constantFrom('http', 'https'), hosts, fc.webPath())
      .map(([scheme, host, path]) =>
        canonicalizeURL(`${scheme}://${host}${path.startsWith('/') ? path : `/${path}`}`),
      );
    fc.assert(
      fc.property(fc.array(url, { minLength: 1, maxLength: 8 }), (urls) => {
        for (const u of urls) expect(originOf(u)).toBe(new URL(u).origin);
      }),
    );
  });

  test("an origin is the URL's own, not a prefix it shares with another", () => {
    expect(originOf('https://a.test/x')).toBe('https://a.test');
    expect(originOf('https://a.test:8443/x')).toBe('https://a.test:8443');
    expect(originOf('https://a.test.evil/x')).toBe('https://a.test.evil');
    expect(originOf('https://a.test/y')).toBe('https://a.test');
    expect(originOf('https://user@a.test/y')).toBe('https://a.test');
  });
});
