// RFC 9110 §13.1.3-§13.1.5: a conditional header's date counts only when it is a valid HTTP-date
// (IMF-fixdate, or the obsolete RFC 850 and asctime forms a recipient must also accept). Read with
// Date.parse, `If-Modified-Since: 9999` was the year 9999: a 304 for any file, for ever.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock';
import { type App, createApp } from '../src/index';
import { raw, start } from './helpers';

let dir: string;
let app: App;
let port: number;
const body = 'abcdefghijklmnopqrstuvwxyz';
// Tuesday 2 January 2024: the file's Last-Modified.
const modified = Date.parse('2024-01-02T03:04:05Z');
const lastModified = 'Tue, 02 Jan 2024 03:04:05 GMT';
// The server's time (its injected clock): Sunday 1 June 2031, so the 2030 dates below are past.
const now = Date.parse('2031-06-01T00:00:00Z');
const nowDate = 'Sun, 01 Jun 2031 00:00:00 GMT';
const future = Date.parse('2035-01-02T03:04:05Z');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-cond-dates-'));
  writeFileSync(join(dir, 'f.txt'), body);
  utimesSync(join(dir, 'f.txt'), modified / 1000, modified / 1000);
  // Modified "in the future" by the server's clock (a skewed NFS server, an unpacked archive).
  writeFileSync(join(dir, 'future.txt'), body);
  utimesSync(join(dir, 'future.txt'), future / 1000, future / 1000);
  app = createApp({ clock: { ...systemClock, now: () => now } });
  app.get('/f', (ctx) => ctx.sendFile('f.txt', { root: dir }));
  app.post('/f', (ctx) => ctx.sendFile('f.txt', { root: dir }));
  app.get('/future', (ctx) => ctx.sendFile('future.txt', { root: dir }));
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

function get(headers: Record<string, string>, method = 'GET') {
  return raw(port, { method, path: '/f', headers });
}

/** Each value of `header` (sent with `also`) is ignored: the whole file, 200. */
async function expectWholeFile(
  header: string,
  values: readonly string[],
  also: Record<string, string> = {},
): Promise<void> {
  for (const value of values) {
    const res = await get({ ...also, [header]: value });
    expect(res.status, value).toBe(200);
    expect(res.body, value).toBe(body);
  }
}

describe('If-Modified-Since', () => {
  it('a value that is no HTTP-date is ignored (200), however Date.parse reads it', async () => {
    await expectWholeFile('if-modified-since', [
      '9999',
      '0',
      '2025',
      '2030-01-01T00:00:00Z',
      'Tue, 01 Jan 2030 00:00:00 UTC',
      'Tue, 01 Jan 2030 00:00:00 +0000',
      'Tue, 1 Jan 2030 00:00:00 GMT',
      'tue, 01 jan 2030 00:00:00 gmt',
      'Tue 01 Jan 2030 00:00:00 GMT',
      'January 1, 2030',
      // A weekday the date does not fall on: 1 January 2030 is a Tuesday.
      'Mon, 01 Jan 2030 00:00:00 GMT',
      // No such day, hour or minute.
      'Thu, 31 Feb 2030 00:00:00 GMT',
      'Tue, 01 Jan 2030 24:00:00 GMT',
      'Tue, 01 Jan 2030 00:60:00 GMT',
      // A list of dates (§13.1.3: a recipient must ignore it).
      'Tue, 01 Jan 2030 00:00:00 GMT, Wed, 02 Jan 2030 00:00:00 GMT',
    ]);
  });

  it('a valid date in any of the three forms gets 304 when the file is not newer', async () => {
    for (const value of [
      lastModified,
      'Tue, 01 Jan 2030 00:00:00 GMT',
      // RFC 850, two-digit year: 30 is 2030 (not more than 50 years ahead).
      'Tuesday, 01-Jan-30 00:00:00 GMT',
      // asctime: the day of month padded with a space.
      'Tue Jan  1 00:00:00 2030',
      'Tue Jan 02 03:04:05 2024',
    ]) {
      expect((await get({ 'if-modified-since': value })).status, value).toBe(304);
    }
    // One second before Last-Modified: modified since, 200.
    expect((await get({ 'if-modified-since': 'Tue, 02 Jan 2024 03:04:04 GMT' })).status).toBe(200);
  });

  it("a valid date later than the server's time is ignored (200), §13.1.3", async () => {
    await expectWholeFile('if-modified-since', [
      'Sat, 01 Jan 2033 00:00:00 GMT',
      // One second after the server's time; the time itself is still valid.
      'Sun, 01 Jun 2031 00:00:01 GMT',
      'Saturday, 01-Jan-33 00:00:00 GMT',
      'Sat Jan  1 00:00:00 2033',
    ]);
    expect((await get({ 'if-modified-since': 'Sun, 01 Jun 2031 00:00:00 GMT' })).status).toBe(304);
  });

  it('is ignored with If-None-Match, and for methods other than GET and HEAD', async () => {
    const since = 'Tue, 01 Jan 2030 00:00:00 GMT';
    expect((await get({ 'if-modified-since': since, 'if-none-match': '"x"' })).status).toBe(200);
    expect((await get({ 'if-modified-since': since }, 'HEAD')).status).toBe(304);
    expect((await get({ 'if-modified-since': since }, 'POST')).status).toBe(200);
  });
});

describe('If-Unmodified-Since', () => {
  it('a value that is no HTTP-date is ignored (200), not a 412', async () => {
    await expectWholeFile('if-unmodified-since', [
      '0',
      '2000',
      '2000-01-01',
      // 1 January 2000 is a Saturday.
      'Mon, 01 Jan 2000 00:00:00 GMT',
      'Sat, 01 Jan 2000 00:00:00 GMT, Sun, 02 Jan 2000 00:00:00 GMT',
    ]);
  });

  it('a valid date before Last-Modified, in any of the three forms, is a 412', async () => {
    for (const value of [
      'Sat, 01 Jan 2000 00:00:00 GMT',
      'Saturday, 01-Jan-00 00:00:00 GMT',
      'Sat Jan  1 00:00:00 2000',
    ]) {
      expect((await get({ 'if-unmodified-since': value })).status, value).toBe(412);
    }
    expect((await get({ 'if-unmodified-since': lastModified })).status).toBe(200);
  });
});

describe('If-Range with a date', () => {
  it('a value equal to Last-Modified only as Date.parse reads it gets the whole file', async () => {
    await expectWholeFile(
      'if-range',
      [
        '2024-01-02T03:04:05Z',
        '2024-01-02T03:04:05.000Z',
        'Tue, 02 Jan 2024 03:04:05 +0000',
        'Tue, 02 Jan 2024 03:04:05 UTC',
        'Wed, 02 Jan 2024 03:04:05 GMT',
        'Tue, 2 Jan 2024 03:04:05 GMT',
      ],
      { range: 'bytes=1-2' },
    );
  });

  it('Last-Modified in any of the three forms gets the range', async () => {
    for (const value of [
      lastModified,
      'Tuesday, 02-Jan-24 03:04:05 GMT',
      'Tue Jan  2 03:04:05 2024',
    ]) {
      const res = await get({ range: 'bytes=1-2', 'if-range': value });
      expect(res.status, value).toBe(206);
      expect(res.body, value).toBe('bc');
    }
  });
});

describe('Last-Modified of a file modified after the server time', () => {
  // RFC 9110 §8.8.2.1: an origin server MUST NOT send a Last-Modified later than its time, and
  // replaces such a modification time with the message's origination date.
  it("is the server's time, and validates nothing that would hold the file stale", async () => {
    const res = await raw(port, { path: '/future' });
    expect([res.status, res.headers['last-modified']]).toEqual([200, nowDate]);
    // Sent back, the date still never makes a 304 or a range of a file newer than it.
    const since = await raw(port, { path: '/future', headers: { 'if-modified-since': nowDate } });
    expect([since.status, since.body]).toEqual([200, body]);
    const ranged = await raw(port, {
      path: '/future',
      headers: { range: 'bytes=1-2', 'if-range': nowDate },
    });
    expect([ranged.status, ranged.body]).toEqual([200, body]);
  });
});
