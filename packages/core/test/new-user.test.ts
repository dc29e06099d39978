import { afterEach, describe, expect, test, vi } from 'vitest';
import { createClient } from '../src/index';

// What a new user gets wrong first with a baseURL, and the message that must say how to fix it.

const noFetch = () => Promise.reject(new Error('not called'));

describe('a baseURL without its scheme', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  test('a host ("api.example.com") is shown a full URL, not pointed at localhost', () => {
    // Before: 'pass the full URL, e.g. "http://localhost:3000/api.example.com"'.
    expect(() => createClient({ baseURL: 'api.example.com', fetch: noFetch })).toThrow(
      'keel: `baseURL` must be a full URL, e.g. "https://api.example.com/v1" (a path works only in a browser), got "api.example.com"',
    );
    expect(() => createClient({ baseURL: 'api/v2', fetch: noFetch })).toThrow(
      'keel: `baseURL` must be a full URL, e.g. "https://api.example.com/v1" (a path works only in a browser), got "api/v2"',
    );
  });

  test('"localhost:3000" (which parses as a URL of scheme "localhost:") is a RangeError at creation', () => {
    // Before, every request failed later with "unknown scheme" on GET localhost:3000/users.
    const made = () => createClient({ baseURL: 'localhost:3000', fetch: noFetch });
    expect(made).toThrow(RangeError);
    expect(made).toThrow(
      'keel: `baseURL` must be a full URL, e.g. "https://api.example.com/v1" (a path works only in a browser), got "localhost:3000"',
    );
    // In a browser too: a page cannot make it a URL of its own.
    vi.stubGlobal('location', { href: 'https://app.test/', origin: 'https://app.test' });
    expect(made).toThrow('must be a full URL');
    // A real scheme with a port, and a relative base in the browser (a dotted one too), stay fine.
    createClient({ baseURL: 'http://localhost:3000', fetch: noFetch });
    createClient({ baseURL: '/api', fetch: noFetch });
    createClient({ baseURL: 'api.v2', fetch: noFetch });
  });
});
