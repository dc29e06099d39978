import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as entry from '../src/index';
import {
  BodyTooLargeError,
  HttpException,
  isBodyTooLargeError,
  isHttpException,
} from '../src/index';
import * as redisEntry from '../src/redis/index';
import { raw, start, trackApps } from './helpers';

const app = trackApps();

describe('the error classes a handler or onError may meet are exported from the entry', () => {
  it('BodyTooLargeError: the 413 of an oversize body, with its limit, name and guard', async () => {
    const a = app({ bodyLimit: 8 });
    a.post('/in', (ctx) => ctx.json(ctx.body));
    // A handler reading a body of its own (ctx.req) refuses it with the same class.
    a.post('/manual', { parsers: { raw: ['application/x-own'] } }, () => {
      throw new BodyTooLargeError(4);
    });
    const { port } = await start(a);
    const res = await raw(port, {
      method: 'POST',
      path: '/in',
      headers: { 'content-type': 'application/json' },
      body: '{"a":"0123456789"}',
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({
      status: 413,
      message: 'Request body exceeds 8 bytes',
    });
    const own = await raw(port, {
      method: 'POST',
      path: '/manual',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(own.status).toBe(413);
    expect(JSON.parse(own.body)).toMatchObject({ message: 'Request body exceeds 4 bytes' });

    const err = new BodyTooLargeError(1024);
    expect(err).toBeInstanceOf(HttpException);
    expect(err).toMatchObject({ name: 'BodyTooLargeError', status: 413, limit: 1024 });
    expect(isBodyTooLargeError(err)).toBe(true);
    expect(isHttpException(err)).toBe(true);
    expect(isBodyTooLargeError(new HttpException(413))).toBe(false);
    expect(isBodyTooLargeError({ name: 'BodyTooLargeError', status: 413 })).toBe(false);
  });

  it('every error class defined in src is exported from the entry, with its guard', () => {
    const dir = fileURLToPath(new URL('../src/', import.meta.url));
    // The Redis store's errors are exported where the store is (`@keel/server/redis`, the entry
    // that needs ioredis); every other one from the main entry.
    const classes: [name: string, entry: Record<string, unknown>][] = [];
    for (const file of readdirSync(dir, { recursive: true }) as string[]) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
      const text = readFileSync(dir + file, 'utf8');
      for (const m of text.matchAll(/export class (\w+) extends (?:Error|HttpException)\b/g)) {
        classes.push([m[1]!, file.startsWith('redis') ? redisEntry : entry]);
      }
    }
    expect(classes.map(([name]) => name)).toContain('BodyTooLargeError');
    expect(classes.map(([name]) => name)).toContain('RedisStoreError');
    for (const [name, exported] of classes) {
      expect(typeof exported[name], name).toBe('function');
      const guard = `is${name}`;
      expect(typeof exported[guard], guard).toBe('function');
    }
  });
});
