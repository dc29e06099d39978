import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEventHub } from '../src/index';
import { redisStreams } from '../src/redis/index';
import { until } from './helpers';

// A password in a Redis URL never reaches a message keel builds: from the URL itself (a check
// that quotes the value, the store's address) or from a cause's text that quotes it.

const warnings: string[] = [];
const onWarning = (w: Error): void => {
  warnings.push(w.message);
};
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

describe('passwords in URLs are hidden in messages', () => {
  it('a url check that quotes the url', () => {
    for (const url of ['http://u:hunter2@127.0.0.1:6379', 'https://:hunter2@redis.example.com']) {
      let message = '';
      try {
        redisStreams({ url });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^keel: `url` must be a redis:\/\/ or rediss:\/\/ URL, got "/);
      expect(message).not.toContain('hunter2');
      expect(message).toContain(':***@');
    }
  });

  it("the store's outage warning: its address and the connection error's text", async () => {
    // A socket path that holds what looks like userinfo (`redis:/u:pw@host` with one slash,
    // which ioredis read as this path, is now refused at once): ioredis's connect error quotes
    // it (`connect ENOENT /u:hunter2@127.0.0.1:6379`).
    const hub = createEventHub({
      store: redisStreams({
        url: '/u:hunter2@127.0.0.1:6379',
        reconnect: { initialDelay: 10, maxDelay: 20 },
      }),
    });
    hub.ready.catch(() => {});
    try {
      await until(() => warnings.some((w) => w.includes('Redis event store')));
    } finally {
      await hub.close();
    }
    const warning = warnings.find((w) => w.includes('Redis event store'))!;
    expect(warning).toContain('ENOENT');
    expect(warning).toContain('/u:***@127.0.0.1:6379');
    expect(warning).not.toContain('hunter2');
  });
});
