// ctx.path is decoded (`%0A` is a line break), and the default error log (no onError handler)
// printed it as is: a request to `/files/a%0A[keel]%20GET%20/admin%20ok` of a failing route
// wrote a line of the attacker's choosing into the server's log (CWE-117, log forging).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type App, createApp } from '../../src/index';
import { socketBytes, start } from '../helpers';

let app: App | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await app?.close();
  app = undefined;
});

async function logged(target: string): Promise<string> {
  const lines: string[] = [];
  // The sink under test: what the default error log writes, captured (and kept off the output).
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    lines.push(args.map(String).join(' '));
  });
  app = createApp();
  app.get('/files/*', () => {
    throw new Error('boom');
  });
  const { port } = await start(app);
  const answer = await socketBytes(
    port,
    `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    2000,
  );
  expect(answer).toMatch(/^HTTP\/1\.1 500 /);
  return lines.join('\n');
}

describe('the default error log cannot be forged through the path', () => {
  it('line breaks decoded from the path are escaped', async () => {
    const log = await logged('/files/a%0D%0A[keel]%20GET%20/admin%20ok%0A');
    expect(log.split('\n')[0]).toBe(
      '[keel] GET "/files/a\\r\\n[keel] GET /admin ok\\n" failed: Error: boom',
    );
    expect(log).not.toMatch(/^\[keel\] GET \/admin ok/m);
  });

  it('other control characters too (an ANSI escape that rewrites the terminal line)', async () => {
    const log = await logged('/files/a%1B[2K%1B[1Gfine');
    expect(log.split('\n')[0]).toBe(
      '[keel] GET "/files/a\\u001b[2K\\u001b[1Gfine" failed: Error: boom',
    );
  });

  it('C1 controls and the Unicode line separators too', async () => {
    const log = await logged('/files/a%C2%85b%E2%80%A8c');
    expect(log.split('\n')[0]).toBe('[keel] GET "/files/a\\u0085b\\u2028c" failed: Error: boom');
  });

  it('an ordinary path is logged as it was', async () => {
    const log = await logged('/files/r%C3%A9sum%C3%A9.pdf');
    expect(log.split('\n')[0]).toBe('[keel] GET /files/résumé.pdf failed: Error: boom');
  });
});
