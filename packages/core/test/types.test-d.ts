// Type tests of the public generics (vitest typecheck: `expectTypeOf` is checked by tsc, not run).
import { describe, expectTypeOf, it } from 'vitest';
import {
  type ApiResponse,
  CancelledError,
  type CircuitOpenError,
  type Client,
  type ClientEventName,
  type ClientEvents,
  type ClientFeature,
  createBaseClient,
  createClient,
  decideRetry,
  EventEmitter,
  HttpError,
  type HttpMethod,
  type HttpMethodInput,
  isCancelledError,
  isHttpError,
  isKeelError,
  isTimeoutError,
  type KeelError,
  type NetworkError,
  type RequestError,
  type RequestOptions,
  type RetryDecision,
  type RetryOptions,
  resolveRetryOptions,
  type TimeoutError,
  type Tracker,
  withAdaptive,
  withCircuitBreaker,
  withIntelligence,
  withScheduler,
} from '../src/index';

declare const client: Client;
declare const thenable: PromiseLike<Response>;

describe('ClientEvents', () => {
  it('client.on types the payload by event name and returns its unsubscribe', () => {
    const off = client.on('retry', (event) => {
      expectTypeOf(event).toEqualTypeOf<ClientEvents['retry']>();
      expectTypeOf(event.attempts).toEqualTypeOf<number>();
      expectTypeOf(event.delay).toEqualTypeOf<number>();
      expectTypeOf(event.tracker).toEqualTypeOf<Tracker>();
      // Exactly what a retried attempt fails with: the spec types it HttpError, but a retried
      // network failure or timeout carries its own error (README, Events).
      expectTypeOf(event.error).toExtend<HttpError | NetworkError | TimeoutError>();
      // The spec's HttpError fields (status?, statusText?, headers?) read on any retried error:
      // absent (undefined) when the attempt got no response.
      expectTypeOf(event.error.status).toEqualTypeOf<number | undefined>();
      expectTypeOf(event.error.statusText).toEqualTypeOf<string | undefined>();
      expectTypeOf(event.error.headers).toEqualTypeOf<Headers | undefined>();
      if (isHttpError(event.error))
        expectTypeOf(event.error.status).toEqualTypeOf<number | undefined>();
      if (event.error.name === 'NetworkError') expectTypeOf(event.error).toExtend<NetworkError>();
    });
    expectTypeOf(off).toEqualTypeOf<() => void>();
    client.on('circuit-rejected', ({ error, endpoint }) => {
      expectTypeOf(error).toEqualTypeOf<CircuitOpenError>();
      expectTypeOf(endpoint).toEqualTypeOf<string>();
    });
    client.on('cache-hit', ({ stale }) => expectTypeOf(stale).toEqualTypeOf<boolean>());
    client.on('request-delayed', ({ reason }) =>
      expectTypeOf(reason).toEqualTypeOf<'backoff' | 'retry-after' | 'rate-limit'>(),
    );
  });

  it('refuses an unknown event and a field its payload does not have', () => {
    // @ts-expect-error no such event
    client.on('requset', () => {});
    // @ts-expect-error `success` has no `attempts`
    client.on('success', ({ attempts }) => attempts);
    // @ts-expect-error a listener of another event's payload
    client.on('dedup', (event: ClientEvents['retry']) => event);
  });

  it('ClientEventName is exactly the keys of ClientEvents', () => {
    expectTypeOf<ClientEventName>().toEqualTypeOf<keyof ClientEvents>();
    expectTypeOf<'cache-hit'>().toExtend<ClientEventName>();
  });

  it('EventEmitter<ClientEvents>: on, once, off and emit are typed by name', () => {
    const events = new EventEmitter<ClientEvents>();
    const listener = (event: ClientEvents['invalidate']) => {
      expectTypeOf(event.keys).toEqualTypeOf<string[]>();
    };
    const off = events.on('invalidate', listener);
    expectTypeOf(off).toEqualTypeOf<() => void>();
    events.off('invalidate', listener);
    events.once('queue-paused', ({ group }) =>
      expectTypeOf(group).toEqualTypeOf<string | undefined>(),
    );
    // @ts-expect-error off with a listener of another event
    events.off('revalidate', listener);
    // @ts-expect-error a payload missing `keys`
    events.emit('invalidate', { target: '/x' });
  });

  it('EventEmitter without a type argument is the standalone emitter: any name, unknown payloads', () => {
    const bare: EventEmitter = new EventEmitter();
    expectTypeOf(bare).toEqualTypeOf<EventEmitter<Record<string, unknown>>>();
    bare.on('ping', (payload) => expectTypeOf(payload).toEqualTypeOf<unknown>());
    bare.once('pong', () => {});
    bare.emit('ping', { n: 1 });
  });
});

describe('requests', () => {
  it('data is typed by the type argument', () => {
    expectTypeOf(client.get<{ id: number }>('/x')).resolves.toEqualTypeOf<
      ApiResponse<{ id: number }>
    >();
    expectTypeOf(client.get('/x')).resolves.toEqualTypeOf<ApiResponse<unknown>>();
  });
});

describe('errors', () => {
  it('each class has a literal name', () => {
    expectTypeOf<HttpError['name']>().toEqualTypeOf<'HttpError'>();
    expectTypeOf<TimeoutError['name']>().toEqualTypeOf<'TimeoutError'>();
    expectTypeOf<CancelledError['name']>().toEqualTypeOf<'CancelledError'>();
  });

  it('each guard narrows to its class', () => {
    const error: unknown = undefined;
    if (isHttpError(error)) {
      expectTypeOf(error).toEqualTypeOf<HttpError>();
      expectTypeOf(error.status).toEqualTypeOf<number | undefined>();
      expectTypeOf(error.method).toEqualTypeOf<string>();
    }
    if (isTimeoutError(error)) expectTypeOf(error.kind).toEqualTypeOf<TimeoutError['kind']>();
    if (isCancelledError(error)) expectTypeOf(error).toEqualTypeOf<CancelledError>();
    if (isKeelError(error)) expectTypeOf(error).toEqualTypeOf<KeelError>();
  });

  it('RequestError is what a request rejects with', () => {
    expectTypeOf<HttpError>().toExtend<RequestError>();
    expectTypeOf<TimeoutError>().toExtend<RequestError>();
  });

  it('one constructor form: the request first', () => {
    const request = { method: 'GET', url: 'https://a.test/x' };
    expectTypeOf(new HttpError(request, { status: 500 }).url).toEqualTypeOf<string>();
    new CancelledError(request, { message: 'gone' });
    // @ts-expect-error the positional (status, statusText) form is gone
    new HttpError(500, 'Server Error');
    // The spec's errors list no constructor input: built bare, or HttpError from its response.
    new CancelledError();
    expectTypeOf(new HttpError({ status: 503 }).status).toEqualTypeOf<number | undefined>();
    // Built bare, method and url are '' (still `string`): `error.url.startsWith` type-checks and runs.
    expectTypeOf(new CancelledError().url).toEqualTypeOf<string>();
    expectTypeOf(new CancelledError().url.startsWith('https:')).toEqualTypeOf<boolean>();
    expectTypeOf<TimeoutError['method']>().toEqualTypeOf<string>();
    expectTypeOf<CircuitOpenError['url']>().toEqualTypeOf<string>();
  });
});

describe('createBaseClient', () => {
  it('takes features, not the feature options, and makes a Client', () => {
    expectTypeOf(
      createBaseClient({ features: [withIntelligence(), withCircuitBreaker()] }),
    ).toEqualTypeOf<Client>();
    expectTypeOf(withScheduler({ concurrency: 2 })).toEqualTypeOf<ClientFeature<'scheduler'>>();
    expectTypeOf(withAdaptive()).toMatchTypeOf<ClientFeature>();
    // @ts-expect-error a feature's options go to its with...() function
    createBaseClient({ scheduler: { concurrency: 2 } });
    // @ts-expect-error intelligence is a feature too
    createBaseClient({ intelligence: { enabled: false } });
    // @ts-expect-error a feature is made by its function, not written by hand
    createBaseClient({ features: ['scheduler'] });
  });
});

describe('headers (client and request)', () => {
  it('takes what the runtime and the README take: a plain object or a Headers', () => {
    createClient({ headers: new Headers({ 'x-tenant': 'acme' }) });
    createClient({ headers: { 'x-tenant': 'acme' } });
    client.get('/x', { headers: new Headers({ 'x-tenant': 'acme' }) });
    // A value left undefined is not sent (an optional token, say).
    const token = undefined as string | undefined;
    client.get('/x', { headers: { authorization: token } });
    const frozen: Readonly<Record<string, string>> = { a: 'b' };
    client.post('/x', null, { headers: frozen });
  });

  it('refuses what the runtime refuses: entry arrays and non-string values', () => {
    // @ts-expect-error an array of [name, value] pairs is a TypeError at runtime
    client.get('/x', { headers: [['x-tenant', 'acme']] });
    // @ts-expect-error a header value is a string
    createClient({ headers: { 'x-retry': true } });
  });
});

describe('request options take what the runtime and the README take', () => {
  it('params: a map of values and arrays of values, or a URLSearchParams (read as its pairs)', () => {
    client.get('/x', { params: { page: 2, on: true, skip: null, none: undefined, tag: ['a', 1] } });
    client.get('/x', { params: new URLSearchParams([['b', '2']]) });
    const fixed = { tag: ['a', 'b'] } as const;
    client.get('/x', { params: fixed });
    // @ts-expect-error an object value has no query form (a TypeError at runtime)
    client.get('/x', { params: { where: { a: 1 } } });
  });

  it('tags and invalidation targets: any array of strings, a readonly one too', () => {
    const TAGS = ['users', 'admin'] as const;
    client.post('/x', null, { tags: TAGS });
    client.invalidate(TAGS);
    client.cancelReads(TAGS);
    client.fetchingKeys(TAGS);
    // @ts-expect-error tags are strings
    client.post('/x', null, { tags: [1] });
  });

  it('cache: a request layers ttl, strategy and enabled; the store options are the client’s', () => {
    client.get('/x', { cache: { ttl: 1000, strategy: 'stale-while-revalidate', enabled: true } });
    client.get('/x', { cache: false });
    createClient({ cache: { gcTime: 1000, maxEntries: 100 } });
    // @ts-expect-error gcTime belongs to the client's store (a TypeError on a request)
    client.get('/x', { cache: { gcTime: 1000 } });
    // @ts-expect-error so does maxEntries
    client.get('/x', { cache: { maxEntries: 10 } });
  });
});

describe('methods: upper or lower case, as the runtime takes them', () => {
  it('request, resolve and retry.methods take either spelling; what keel reports is upper case', () => {
    client.request('get', '/x');
    client.request('DELETE', '/x');
    expectTypeOf(client.resolve('post', '/x').method).toEqualTypeOf<HttpMethod>();
    createClient({ retry: { methods: ['post', 'GET'] } });
    expectTypeOf<'patch'>().toExtend<HttpMethodInput>();
    // @ts-expect-error no such method (a RangeError naming it at runtime)
    client.request('FETCH', '/x');
    // @ts-expect-error nor in retry.methods
    createClient({ retry: { methods: ['fetch'] } });
  });
});

describe('FetchLike: what the runtime answers', () => {
  it('a fetch may return its Response at once, or a promise (any thenable) of one', () => {
    createClient({ fetch: globalThis.fetch });
    createClient({ fetch: (input, init) => globalThis.fetch(input, init) });
    createClient({ fetch: () => Response.json({ ok: 1 }) });
    createClient({ fetch: () => thenable });
    // @ts-expect-error a string is no Response (a NetworkError at runtime)
    createClient({ fetch: () => 'x' });
  });
});

describe('RequestOptions as the spec lists it (method, url, then the options)', () => {
  it('takes the spec’s method and url fields; the arguments win, so they are optional', () => {
    const spec: RequestOptions = { method: 'POST', url: '/users', body: { n: 1 }, retry: false };
    client.request('POST', '/users', spec);
    client.get('/x', { method: 'get', url: '/x', timeout: 10 });
    client.get('/x', {});
    // @ts-expect-error an unknown method is still refused
    client.get('/x', { method: 'FETCH' });
    // @ts-expect-error url is a string
    client.get('/x', { url: new URL('https://a.test/x') });
  });
});

describe('decideRetry({error, options, attempts}) as the spec lists it', () => {
  it('takes the spec’s RetryOptions fields: retryOn, maxRetryAfter and methods are optional', () => {
    const { retryOn: _r, maxRetryAfter: _m, methods: _x, ...options } = resolveRetryOptions();
    expectTypeOf(
      decideRetry({ error: new Error('x'), options, attempts: 1 }),
    ).toEqualTypeOf<RetryDecision>();
    decideRetry({ error: null, options: resolveRetryOptions(), attempts: 1 });
    decideRetry({ error: null, options: { ...options, maxRetryAfter: undefined }, attempts: 1 });
    // @ts-expect-error attempts, baseDelay, ... are still required (they have no default here)
    decideRetry({ error: null, options: { attempts: 3 }, attempts: 1 });
  });
});

describe('retryOn read back', () => {
  it('is callable with the status alone (the specification’s form) and with the error', () => {
    const resolved = resolveRetryOptions({ retryOn: (status, error) => status === 503 || !error });
    expectTypeOf(resolved.retryOn!).toBeCallableWith(503);
    expectTypeOf(resolved.retryOn!).toBeCallableWith(undefined, new Error('x'));
    const options: RetryOptions = { retryOn: (status) => status === 429 };
    expectTypeOf(options.retryOn!).toBeCallableWith(429);
  });
});
