// RFC 6265 §4.1.1: a cookie name is a token: none of ( ) < > @ , ; : \ " / [ ] ? = { } space or
// tab. keel URL-encodes names (the spec: "name and value are URL-encoded"), but
// encodeURIComponent leaves `(` and `)` as they are: `a(b=v` went out, a name strict parsers
// refuse. Every separator must leave as a token, and read back by the name it was set with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const SEPARATORS = [
  '(',
  ')',
  '<',
  '>',
  '@',
  ',',
  ';',
  ':',
  '\\',
  '"',
  '/',
  '[',
  ']',
  '?',
  '=',
  '{',
  '}',
  ' ',
  '\t',
];

let app: App;
/** The name the routes use: set by each case. */
let name = '';
let port: number;

beforeAll(async () => {
  app = createApp();
  app.get('/set', (ctx) => ctx.setCookie(name, 'v').send('ok'));
  app.get('/read', (ctx) => ctx.json({ value: ctx.cookie(name) ?? null }));
  ({ port } = await start(app));
});

afterAll(() => app.close());

describe('setCookie names with separators', () => {
  it.each(SEPARATORS)('%j leaves as a token and reads back by the same name', async (sep) => {
    name = `a${sep}b`;
    const set = await raw(port, { path: '/set' });
    expect(set.status).toBe(200);
    const header = set.headers['set-cookie']?.[0] ?? '';
    const sent = header.slice(0, header.indexOf('='));
    expect(sent).toMatch(TOKEN);
    const read = await raw(port, {
      path: '/read',
      headers: { cookie: header.slice(0, header.indexOf(';')) },
    });
    expect(JSON.parse(read.body)).toEqual({ value: 'v' });
  });
});
