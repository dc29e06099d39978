import type { CacheUpdate } from '@keel/core';
import { expect, type Scenario } from '../scenario';
import type { User } from '../server';

export const invalidateScenario: Scenario = {
  title: 'Invalidation after a mutation',
  story:
    'A subscriber watches GET /users. POST /users succeeds, which invalidates /users; keel ' +
    'refetches the watched key, so the next read has the new user without another request.',
  async run({ client, server, log, tally }) {
    const { key } = client.resolve('GET', '/users');
    const updates: CacheUpdate['type'][] = [];
    let refreshed!: () => void;
    const revalidated = new Promise<void>((resolve) => {
      refreshed = resolve;
    });
    const unsubscribe = client.subscribe(key, (update) => {
      updates.push(update.type);
      if (update.type === 'revalidate') refreshed();
    });
    try {
      const before = await client.get<User[]>('/users');
      log.say(`GET /users -> ${before.data.length} users`);
      const created = await client.post<User>('/users', { name: 'Grace' });
      log.say(`POST /users -> ${created.status}, created #${created.data.id} ${created.data.name}`);
      await revalidated;
      const hitsAfterRefetch = server.hits('/users');
      const after = await client.get<User[]>('/users');
      log.say(
        `GET /users -> ${after.data.length} users (${after.data.map((u) => u.name).join(', ')}), from cache: no new request`,
      );
      log.say(`subscriber saw: ${updates.join(' -> ')}`);
      expect(
        after.data.some((u) => u.name === 'Grace'),
        'the refetched list has the new user',
      );
      expect(server.hits('/users') === hitsAfterRefetch, 'the last read came from the cache');
      expect(tally.invalidated >= 1 && tally.revalidated >= 1, 'invalidate and revalidate events');
    } finally {
      unsubscribe();
    }
  },
};
