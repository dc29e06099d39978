import { describe, expect, it } from 'vitest';
import {
  type BaseClientOptions,
  CircuitOpenError,
  type Client,
  type ClientFeature,
  createBaseClient,
  createClient,
  dehydrate,
  hydrate,
  inspect,
  withAdaptive,
  withCircuitBreaker,
  withIntelligence,
  withScheduler,
} from '../src/index';
import { FakeClock, flush, jsonResponse, recordEvents } from './helpers';

/** A client whose fetch answers every call with `status` (JSON body), counting the calls. */
function client(
  options: BaseClientOptions = {},
  status = 200,
): { client: Client; calls: () => number; clock: FakeClock } {
  let calls = 0;
  const clock = new FakeClock();
  const c = createBaseClient({
    baseURL: 'https://api.test',
    clock,
    retry: false,
    cache: false,
    fetch: async () => {
      calls++;
      return jsonResponse({ ok: status < 400 }, { status });
    },
    ...options,
  });
  return { client: c, calls: () => calls, clock };
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => e,
  );

describe('createBaseClient options', () => {
  it.each([
    ['intelligence', 'withIntelligence', { enabled: true }],
    ['circuitBreaker', 'withCircuitBreaker', { failureThreshold: 3 }],
    ['scheduler', 'withScheduler', { concurrency: 2 }],
    ['adaptive', 'withAdaptive', { enabled: true }],
  ])('a `%s` option is a TypeError naming %s(), never ignored', (option, maker, value) => {
    const make = () => createBaseClient({ [option]: value } as BaseClientOptions);
    expect(make).toThrow(TypeError);
    expect(make).toThrow(
      `keel: \`${option}\` must be passed to ${maker}() in \`features\`: createBaseClient({ features: [${maker}(options)] }), got an object`,
    );
    // Even alongside the feature: the feature takes the options, one way to say it.
    expect(() =>
      createBaseClient({
        [option]: value,
        features: [withIntelligence(), withCircuitBreaker(), withScheduler(), withAdaptive()],
      } as BaseClientOptions),
    ).toThrow(TypeError);
  });

  it('`features` must be an array of features, each at most once', () => {
    expect(() => createBaseClient({ features: withScheduler() as never })).toThrow(
      'keel: `features` must be an array of features, got an object',
    );
    expect(() => createBaseClient({ features: [{ name: 'scheduler' } as ClientFeature] })).toThrow(
      TypeError,
    );
    expect(() => createBaseClient({ features: ['scheduler' as never] })).toThrow(
      'keel: `features` must be features made by withIntelligence(), withCircuitBreaker(), withScheduler() or withAdaptive(), got "scheduler"',
    );
    expect(() => createBaseClient({ features: [withScheduler(), withScheduler()] })).toThrow(
      RangeError,
    );
    expect(() => createBaseClient({ features: [withScheduler(), withScheduler()] })).toThrow(
      '`features` must be withScheduler() at most once',
    );
  });

  it('createClient takes the options, not `features`', () => {
    expect(() => createClient({ features: [withScheduler()] } as never)).toThrow(
      'keel: `features` must be an option of createBaseClient, not of createClient, got an array',
    );
  });

  it("each with...() checks its options when it is called, with createClient's messages", () => {
    expect(() => withScheduler({ concurrency: 0 })).toThrow(RangeError);
    expect(() => withScheduler({ concurrency: 0 })).toThrow('`scheduler.concurrency`');
    expect(() => withCircuitBreaker({ failureThreshold: 0 })).toThrow(
      '`circuitBreaker.failureThreshold`',
    );
    expect(() => withIntelligence({ enabled: 'yes' as never })).toThrow(TypeError);
    expect(() => withAdaptive({ errorRatio: 2 })).toThrow('`adaptive.errorRatio`');
    // Disabled, still checked (as the createClient options are).
    expect(() => withAdaptive({ enabled: false, errorRatio: 2 })).toThrow(RangeError);
    expect(() => withScheduler({ enabled: false, concurrency: -1 })).toThrow(RangeError);
  });

  it('a feature is a frozen value showing its name; the same one may serve several clients', () => {
    const feature = withCircuitBreaker({ failureThreshold: 1 });
    expect(feature.name).toBe('circuitBreaker');
    expect(Object.isFrozen(feature)).toBe(true);
    const a = client({ features: [feature] }, 500);
    const b = client({ features: [feature] }, 500);
    return (async () => {
      await outcome(a.client.get('/x'));
      expect(a.client.circuitBreaker().status('GET', '/x').state).toBe('open');
      // b has its own breaker.
      expect(b.client.circuitBreaker().status('GET', '/x').state).toBe('closed');
    })();
  });
});

describe('a client without a feature answers its controller as a disabled one', () => {
  const bare = () => client().client;
  const disabled = () =>
    createClient({
      baseURL: 'https://api.test',
      fetch: async () => jsonResponse({}),
      intelligence: { enabled: false },
      circuitBreaker: { enabled: false },
    });

  it('scheduler: transparent mode, stats all zeros, prioritize needs lanes', () => {
    const c = bare();
    expect(c.scheduler().stats()).toEqual({
      active: 0,
      queued: 0,
      delayed: 0,
      completed: 0,
      rejected: 0,
      lanes: { high: 0, normal: 0, low: 0 },
    });
    expect(c.scheduler().stats()).toEqual(disabled().scheduler().stats());
    expect(() => c.scheduler().prioritize('g', 'high')).toThrow(/needs priority lanes/);
    expect(() => c.scheduler().pauseGroup(1 as never)).toThrow(TypeError);
    c.cancelGroup('g');
  });

  it('adaptive: enabled false, no endpoint, zero metrics', () => {
    const c = bare();
    expect(c.adaptive().snapshot()).toEqual({ enabled: false, endpoints: {} });
    expect(c.adaptive().endpoint('GET', '/x')).toBeUndefined();
    expect(c.adaptive().metrics()).toEqual(disabled().adaptive().metrics());
    c.adaptive().reset();
    expect(Object.isFrozen(c.adaptive())).toBe(true);
  });

  it('circuit breaker: a closed circuit for any endpoint, none kept, bad arguments refused', async () => {
    const { client: c } = client({}, 500);
    for (let i = 0; i < 10; i++) expect(await outcome(c.get('/x'))).not.toBe('ok');
    const status = c.circuitBreaker().status('get', '/x?page=2');
    expect(status).toEqual({
      endpoint: 'GET /x',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
    expect(status).toEqual(disabled().circuitBreaker().status('GET', '/x'));
    expect(c.circuitBreaker().statuses()).toEqual([]);
    // A disabled breaker keeps none either: status() creates no circuit for statuses() to list.
    const off = disabled();
    off.circuitBreaker().status('GET', '/x');
    expect(off.circuitBreaker().statuses()).toEqual([]);
    expect(inspect(off).circuits()).toEqual([]);
    c.circuitBreaker().reset();
    expect(() => c.circuitBreaker().status(1 as never, '/x')).toThrow(TypeError);
    expect(Object.isFrozen(c.circuitBreaker())).toBe(true);
  });

  it('intelligence: the empty snapshot a disabled intelligence gives', async () => {
    const { client: c } = client();
    await c.get('/x');
    const snapshot = c.intelligence().snapshot();
    expect(snapshot).toEqual(disabled().intelligence().snapshot());
    expect(snapshot.summary.totalRequests).toBe(0);
    expect(snapshot.endpoints).toEqual([]);
    expect(c.intelligence().endpoint('GET', '/x')).toBeUndefined();
    c.intelligence().reset();
  });

  it('intelligence without the feature still reports the adaptive counters', () => {
    const c = createBaseClient({ fetch: async () => jsonResponse({}), features: [withAdaptive()] });
    expect(c.adaptive().snapshot().enabled).toBe(true);
    expect(c.intelligence().snapshot().summary.adaptive).toEqual(c.adaptive().metrics());
  });
});

describe('each feature does its work only when given', () => {
  it('withCircuitBreaker: the circuit opens and rejects without a network call', async () => {
    const t = client({ features: [withCircuitBreaker({ failureThreshold: 2 })] }, 503);
    await outcome(t.client.get('/x'));
    await outcome(t.client.get('/x'));
    const rejected = await outcome(t.client.get('/x'));
    expect(rejected).toBeInstanceOf(CircuitOpenError);
    expect(t.calls()).toBe(2);
    // Without it, every request reaches the server.
    const bare = client({}, 503);
    for (let i = 0; i < 6; i++) await outcome(bare.client.get('/x'));
    expect(bare.calls()).toBe(6);
  });

  it('withIntelligence: counts requests and recommends a timeout when asked', async () => {
    const t = client({ features: [withIntelligence({ adaptiveTimeout: true })] });
    for (let i = 0; i < 3; i++) await t.client.get('/x');
    const stats = t.client.intelligence().endpoint('GET', '/x');
    expect(stats?.requests).toBe(3);
    expect(stats?.successes).toBe(3);
  });

  it('withScheduler: queues past its concurrency and emits scheduler events', async () => {
    const answers: ((r: Response) => void)[] = [];
    const c = createBaseClient({
      baseURL: 'https://api.test',
      cache: false,
      fetch: () => new Promise<Response>((resolve) => answers.push(resolve)),
      features: [withScheduler({ concurrency: 1 })],
    });
    const { events } = recordEvents(c, ['request-queued', 'request-started']);
    const first = c.get('/a');
    const second = c.get('/b');
    await flush();
    expect(c.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    expect(events.map((e) => e.name)).toEqual([
      'request-queued',
      'request-started',
      'request-queued',
    ]);
    answers[0]!(jsonResponse(1));
    await first;
    await flush();
    answers[1]!(jsonResponse(2));
    expect((await second).data).toBe(2);
  });

  it('withScheduler({ enabled: false }) is transparent: no scheduler event', async () => {
    const c = createBaseClient({
      fetch: async () => jsonResponse({}),
      baseURL: 'https://api.test',
      features: [withScheduler({ enabled: false, priority: true })],
    });
    const { events } = recordEvents(c, ['request-queued', 'request-started']);
    await c.get('/a');
    expect(events).toEqual([]);
    // Its (disabled) lanes are still what prioritize answers to.
    expect(c.scheduler().prioritize('g', 'high')).toBe(0);
  });

  it('a transparent scheduler checks prioritize as the scheduler does: lanes first, then its arguments', () => {
    const fetch = async () => jsonResponse({});
    const lanes = createBaseClient({
      fetch,
      features: [withScheduler({ enabled: false, priority: true })],
    }).scheduler();
    expect(() => lanes.prioritize(42 as never, 'high')).toThrow(
      new TypeError('keel: `selector` must be a group name or a request key, got 42'),
    );
    expect(() => lanes.prioritize('g', 'urgent' as never)).toThrow(
      new RangeError("keel: `priority` must be one of 'high', 'normal', 'low', got \"urgent\""),
    );
    // Without lanes (no scheduler, or one without `priority`) the options are what is wrong,
    // whatever the arguments.
    for (const features of [[], [withScheduler({ enabled: false })]]) {
      const none = createBaseClient({ fetch, features }).scheduler();
      expect(() => none.prioritize(42 as never, 'urgent' as never)).toThrow(RangeError);
      expect(() => none.prioritize(42 as never, 'urgent' as never)).toThrow(/needs priority lanes/);
    }
  });

  it('withAdaptive is on when added; the adaptive option is off unless enabled: true', () => {
    const fetch = async () => jsonResponse({});
    expect(
      createBaseClient({ fetch, features: [withAdaptive()] })
        .adaptive()
        .snapshot().enabled,
    ).toBe(true);
    expect(
      createBaseClient({ fetch, features: [withAdaptive({ enabled: false })] })
        .adaptive()
        .snapshot().enabled,
    ).toBe(false);
    expect(
      createClient({ fetch, adaptive: { concurrency: true } })
        .adaptive()
        .snapshot().enabled,
    ).toBe(false);
    expect(
      createClient({ fetch, adaptive: { enabled: true } })
        .adaptive()
        .snapshot().enabled,
    ).toBe(true);
  });

  it('withAdaptive with withScheduler caps an endpoint that keeps failing', async () => {
    const clock = new FakeClock();
    const c = createBaseClient({
      baseURL: 'https://api.test',
      clock,
      cache: false,
      retry: false,
      fetch: async () => jsonResponse({}, { status: 503 }),
      features: [
        withAdaptive({
          concurrency: true,
          degradeSamples: 1,
          changeCooldown: 0,
          latencyWindow: 4,
          outcomeWindow: 2,
        }),
        withScheduler({ concurrency: 4 }),
      ],
    });
    for (let i = 0; i < 12; i++) await outcome(c.get('/slow'));
    const state = c.adaptive().endpoint('GET', '/slow');
    expect(state?.configured).toBe(4);
    expect(state?.effective).toBeLessThan(4);
  });

  it('the order of `features` does not matter: observers subscribe in one fixed order', async () => {
    const make = (features: ClientFeature[]) => {
      const t = client({ features }, 500);
      const seen: string[] = [];
      // A user listener sees the breaker and intelligence already updated.
      t.client.on('error', () => {
        seen.push(
          `${t.client.circuitBreaker().status('GET', '/x').state}/${t.client.intelligence().endpoint('GET', '/x')?.failures}`,
        );
      });
      return { ...t, seen };
    };
    const a = make([withIntelligence(), withCircuitBreaker({ failureThreshold: 1 })]);
    const b = make([withCircuitBreaker({ failureThreshold: 1 }), withIntelligence()]);
    await outcome(a.client.get('/x'));
    await outcome(b.client.get('/x'));
    expect(a.seen).toEqual(['open/1']);
    expect(b.seen).toEqual(a.seen);
  });
});

describe('the base client is a whole client', () => {
  it('hands its cache over with dehydrate / hydrate, to and from createClient', async () => {
    const server = client({ cache: true });
    await server.client.get('/users');
    // The browsers on the server's clock: an entry is as old as its stored time says.
    const browser = createClient({
      baseURL: 'https://api.test',
      fetch: async () => jsonResponse('network'),
      clock: server.clock,
    });
    hydrate(browser, dehydrate(server.client));
    expect((await browser.get('/users')).data).toEqual({ ok: true });
    const back = createBaseClient({
      baseURL: 'https://api.test',
      fetch: async () => jsonResponse('network'),
      clock: server.clock,
    });
    hydrate(back, dehydrate(browser));
    expect((await back.get('/users')).data).toEqual({ ok: true });
  });
});
