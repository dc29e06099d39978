import { expect, type Scenario } from '../scenario';
import type { User } from '../server';

const CALLERS = 50;

export const dedupScenario: Scenario = {
  title: 'De-duplication',
  story: `${CALLERS} callers ask for GET /users/2 at the same moment; one request goes out.`,
  async run({ client, server, log, tally }) {
    const joinsBefore = tally.dedupJoins;
    const responses = await Promise.all(
      Array.from({ length: CALLERS }, () => client.get<User>('/users/2')),
    );
    const joins = tally.dedupJoins - joinsBefore;
    log.say(
      `${CALLERS} x GET /users/2 -> ${responses[0]?.data.name}; server saw ${server.hits('/users/2')} request, ${joins} callers joined it`,
    );
    expect(server.hits('/users/2') === 1, 'one request for 50 identical GETs');
    expect(joins === CALLERS - 1, 'every caller but the first joined the flight');
    expect(
      responses.every((r) => r === responses[0]),
      'every caller got the same response object',
    );
  },
};
