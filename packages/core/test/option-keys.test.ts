// The option key lists the checks read (internal/checks keysOf) are written by hand, so they are
// checked against the types here: every field of every public option type, set to undefined
// ("not set"), is taken where that type is taken. A field added to a type and not to its list
// would make the option a RangeError.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { optionTypes } from '../../../scripts/option-docs.mjs';
import {
  createBaseClient,
  createClient,
  withAdaptive,
  withCircuitBreaker,
  withIntelligence,
  withScheduler,
} from '../src/index';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const types = optionTypes(SRC, (name) => name.endsWith('Options') && !name.startsWith('Resolved'));
const fetch = async () => new Response('{}', { headers: { 'content-type': 'application/json' } });

/** The fields of `type` (and of the types it lists as its bases), one level deep or at `under`. */
function fieldsOf(names: string[], under?: string): string[] {
  const out: string[] = [];
  for (const name of names) {
    const fields = types.get(name);
    if (fields === undefined) throw new Error(`no option type ${name}`);
    const prefix = under === undefined ? `${name}.` : `${name}.${under}.`;
    for (const { path } of fields as { path: string }[]) {
      if (path.startsWith(prefix) && !path.slice(prefix.length).includes('.')) {
        out.push(path.slice(prefix.length));
      }
    }
  }
  if (out.length === 0) throw new Error(`no fields in ${names.join(', ')} ${under ?? ''}`);
  return out;
}

/** An object with every field of the types set to undefined. */
const unset = (fields: string[]) => Object.fromEntries(fields.map((f) => [f, undefined]));

describe('every field of every option type is a known key', () => {
  it('createClient: ClientOptions and FetchOptions', () => {
    const fields = fieldsOf(['ClientOptions', 'FetchOptions']);
    expect(fields).toContain('baseURL');
    expect(fields).toContain('credentials');
    expect(() => createClient({ ...unset(fields), fetch })).not.toThrow();
  });

  it('createBaseClient: BaseClientOptions', () => {
    const fields = fieldsOf(['BaseClientOptions', 'ClientOptions', 'FetchOptions']);
    expect(fields).toContain('features');
    expect(() => createBaseClient({ ...unset(fields), fetch })).not.toThrow();
  });

  it('the feature options, on the client and in with...', () => {
    const blocks = {
      cache: fieldsOf(['CacheOptions']),
      retry: fieldsOf(['RetryOptions']),
      intelligence: fieldsOf(['IntelligenceOptions']),
      circuitBreaker: fieldsOf(['CircuitBreakerOptions']),
      scheduler: fieldsOf(['SchedulerOptions']),
      adaptive: fieldsOf(['AdaptiveOptions']),
    };
    for (const [option, fields] of Object.entries(blocks)) {
      expect(() => createClient({ fetch, [option]: unset(fields) }), option).not.toThrow();
    }
    const rateLimit = fieldsOf(['SchedulerOptions'], 'rateLimit');
    expect(rateLimit).toEqual(['requests', 'interval']);
    expect(() =>
      createClient({ fetch, scheduler: { rateLimit: { requests: 1, interval: 10 } } }),
    ).not.toThrow();
    expect(() => withIntelligence(unset(blocks.intelligence))).not.toThrow();
    expect(() => withCircuitBreaker(unset(blocks.circuitBreaker))).not.toThrow();
    expect(() => withScheduler(unset(blocks.scheduler))).not.toThrow();
    expect(() => withAdaptive(unset(blocks.adaptive))).not.toThrow();
  });

  it('a request: RequestOptions and FetchOptions, its cache, retry and scheduler', async () => {
    const client = createClient({ fetch, baseURL: 'https://api.test' });
    const fields = fieldsOf(['RequestOptions', 'FetchOptions']);
    expect(fields).toContain('params');
    await expect(client.get('/a', unset(fields))).resolves.toMatchObject({ status: 200 });
    const cache = fieldsOf(['CacheOptions']).filter((f) => f !== 'gcTime' && f !== 'maxEntries');
    await expect(
      client.get('/b', {
        cache: unset(cache),
        retry: unset(fieldsOf(['RetryOptions'])),
        scheduler: unset(fieldsOf(['SchedulerRequestOptions'])),
      }),
    ).resolves.toMatchObject({ status: 200 });
  });

  it('prefetch: PrefetchOptions', () => {
    const client = createClient({ fetch, baseURL: 'https://api.test' });
    const fields = fieldsOf(['PrefetchOptions']);
    expect(() => client.prefetch(client.resolve('GET', '/p'), unset(fields))).not.toThrow();
  });
});
