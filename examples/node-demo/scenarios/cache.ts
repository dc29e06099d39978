import { expect, type Scenario } from '../scenario';
import type { User } from '../server';

export const cacheScenario: Scenario = {
  title: 'Cache',
  story: 'The first GET /users goes to the server; the second is answered from memory.',
  async run({ client, server, log, tally }) {
    const hitsBefore = tally.cacheHits;
    const first = await client.get<User[]>('/users');
    log.say(
      `GET /users -> ${first.status}, ${first.data.length} users (server has seen ${server.hits('/users')} request)`,
    );
    const second = await client.get<User[]>('/users');
    log.say(
      `GET /users -> ${second.status}, ${second.data.length} users (server still at ${server.hits('/users')})`,
    );
    expect(tally.cacheHits - hitsBefore === 1, 'the second GET /users is a cache hit');
    expect(server.hits('/users') === 1, 'the server saw one GET /users');
    log.say(`cache-hit events so far: ${tally.cacheHits}`);
  },
};
