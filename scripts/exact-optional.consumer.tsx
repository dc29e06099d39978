// An app compiled with `exactOptionalPropertyTypes: true` (check-consumers.mjs, against the
// published declarations): it passes `undefined` explicitly to optional option fields, as code
// reading `process.env` or an optional prop does. The READMEs promise that only `undefined` means
// "not set", so the option types must say `field?: T | undefined`, not only `field?: T`.
import {
  CancelledError,
  type Client,
  createBaseClient,
  createClient,
  dehydrate,
  HttpError,
  TimeoutError,
} from '@keel/core';
import { KeelDevtools } from '@keel/devtools';
import {
  QueryErrorBoundary,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useServerEvents,
} from '@keel/react';
import { cors, createApp, createEventHub, HttpException, memoryStore } from '@keel/server';
import { redisStreams } from '@keel/server/redis';

/** What `process.env.X` is: maybe a string. */
declare const text: string | undefined;
declare const num: number | undefined;
declare const flag: boolean | undefined;
declare const fn: (() => number) | undefined;

// @keel/core: client options, their blocks, request options.
const client: Client = createClient({
  baseURL: text,
  headers: undefined,
  timeout: num,
  deadline: num,
  responseType: undefined,
  maxResponseBytes: num,
  fetch: undefined,
  clock: undefined,
  random: fn,
  onError: undefined,
  credentials: undefined,
  integrity: text,
  cache: { enabled: flag, ttl: num, strategy: undefined, gcTime: num, maxEntries: num },
  retry: {
    attempts: num,
    baseDelay: num,
    maxDelay: num,
    backoff: undefined,
    jitter: flag,
    retryOn: undefined,
    respectRetryAfter: flag,
    maxRetryAfter: num,
    methods: undefined,
  },
  intelligence: { enabled: flag, adaptiveTimeout: flag, adaptiveStaleWhileRevalidate: flag },
  circuitBreaker: { enabled: flag, failureThreshold: num, resetTimeout: num },
  scheduler: {
    enabled: flag,
    concurrency: num,
    priority: flag,
    hosts: undefined,
    rateLimit: undefined,
  },
  adaptive: { enabled: flag, concurrency: flag, highLatencyMs: num, outcomeWindow: num },
});
createBaseClient({ baseURL: text, timeout: num, features: undefined });
await client.get('/todos', {
  baseURL: text,
  headers: undefined,
  params: undefined,
  signal: undefined,
  timeout: num,
  deadline: num,
  responseType: undefined,
  maxResponseBytes: num,
  cache: { ttl: num, strategy: undefined },
  retry: { attempts: num },
  tags: undefined,
  priority: undefined,
  scheduler: { group: text },
  keepalive: flag,
});
await client.post('/todos', { body: undefined, timeout: num });
client.prefetch(client.resolve('GET', '/todos'), { ifStale: flag, reportRejection: flag });
dehydrate(client, { include: undefined });
new HttpError({ method: 'GET', url: '/x' }, { status: 500, statusText: text, retryAfter: num });
new TimeoutError(undefined, { timeout: num, code: text, cause: undefined });
new CancelledError(undefined, { message: text });

// @keel/react: hook options and component props.
export function Todos({ id }: { id?: string | undefined }) {
  useQuery('/todos', {
    enabled: flag,
    select: undefined,
    initialData: undefined,
    placeholderData: undefined,
    refetchInterval: num,
    refetchOnWindowFocus: flag,
    refetchOnReconnect: flag,
    suspense: flag,
    timeout: num,
    params: { id },
  });
  useInfiniteQuery('/pages', {
    initialPageParam: 1,
    getNextPageParam: (_last: unknown, _pages: unknown[], param: number) => param + 1,
    enabled: flag,
    paramsFor: undefined,
    refetchOnWindowFocus: flag,
    timeout: num,
  });
  useMutation('POST', '/todos', {
    body: undefined,
    onMutate: undefined,
    onSuccess: undefined,
    onError: undefined,
    onSettled: undefined,
    invalidate: undefined,
    retry: undefined,
    timeout: num,
  });
  useServerEvents(
    '/events',
    { invalidate: undefined },
    {
      headers: undefined,
      credentials: undefined,
      reconnect: { initialDelay: num, maxDelay: num, jitter: flag },
      fetch: undefined,
      clock: undefined,
      random: fn,
      onError: undefined,
    },
  );
  return (
    <QueryErrorBoundary
      fallback={() => null}
      resetKeys={undefined}
      onReset={undefined}
      onError={undefined}
    >
      <KeelDevtools
        client={undefined}
        initialIsOpen={flag}
        initialView={undefined}
        position={undefined}
        theme={undefined}
        maxFlights={num}
      />
    </QueryErrorBoundary>
  );
}

// @keel/server: app options, route options, ctx options, hub and stores.
const app = createApp({
  bodyLimit: num,
  parsers: { text: undefined, raw: undefined },
  trustProxy: undefined,
  poolSize: num,
  development: flag,
  sse: { heartbeatMs: num, maxBufferedBytes: num },
  sendTimeout: num,
  ignoreTrailingSlash: flag,
  caseSensitive: flag,
  clock: undefined,
  graphql: { maxDepth: num, introspection: flag },
  compression: { threshold: num, encodings: undefined, brotliQuality: num, gzipLevel: num },
  requestIdHeader: text,
  maxParamLength: num,
  requestTimeout: num,
  headersTimeout: num,
  keepAliveTimeout: num,
});
const hub = createEventHub({
  store: redisStreams({
    url: text,
    client: undefined,
    stream: text,
    maxLen: num,
    bufferSize: num,
    commandTimeout: num,
    reconnect: { initialDelay: num, maxDelay: num },
    onError: undefined,
  }),
  bufferSize: num,
  onSlowClient: undefined,
});
createEventHub({ store: memoryStore({ bufferSize: num }) });
app.use(cors({ origin: text, credentials: flag, methods: undefined, maxAge: num }));
app.get('/files/*', { bodyLimit: num, parsers: undefined }, async (ctx) => {
  await ctx.sendFile(ctx.params['*'] ?? '', { root: text, dotfiles: undefined });
});
app.get('/me', (ctx) =>
  ctx
    .setCookie('sid', 'v', {
      httpOnly: flag,
      secure: flag,
      maxAge: num,
      path: text,
      domain: text,
      sameSite: undefined,
      expires: undefined,
    })
    .cacheControl({ maxAge: num, sMaxAge: num, public: flag, immutable: flag, noStore: flag })
    .json({}),
);
app.get('/events', (ctx) => hub.connect(ctx, { topics: undefined }));
app.post('/todos', async (ctx) => {
  const input = ctx.validate({ title: { type: 'string', required: flag, min: num } });
  await hub.publish('todo-added', input, { topic: text });
  await hub.invalidate('/todos', { source: undefined });
  throw new HttpException(400, text, { cause: undefined, headers: undefined });
});
await app.close({ timeoutMs: num });
