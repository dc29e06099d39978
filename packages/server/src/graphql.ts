import type { IncomingHttpHeaders } from 'node:http';
import {
  buildSchema,
  type DocumentNode,
  defaultFieldResolver,
  type ExecutionResult,
  execute,
  GraphQLError,
  type GraphQLFieldResolver,
  type GraphQLSchema,
  getOperationAST,
  Lexer,
  NoSchemaIntrospectionCustomRule,
  parse,
  Source,
  specifiedRules,
  TokenKind,
  type ValidationRule,
  validate,
} from 'graphql';
import Negotiator from 'negotiator';
import vary from 'vary';
import { FORBIDDEN_JSON_KEY, JSON_TOO_DEEP, MALFORMED_JSON, readJson } from './body';
import { isMediaType } from './charset';
import { boolean, checkOptions, integer, keysOf } from './checks';
import type { Context } from './context';
import { isHttpException } from './errors';
import { fragmentCycles, nestsTooDeepThroughFragments } from './graphql-fragments';
import { operationLimitsRule, tooManyFieldPairs } from './graphql-limits';
import { JSON_TYPE } from './slot';

/**
 * Resolvers for `ctx.graphql`, in either shape:
 * - by type: `{ Query: { user: (parent, args, ctx, info) => ... }, User: { ... } }`
 * - as a root value: `{ user: (args, ctx, info) => ... }` (graphql-js `rootValue` style)
 */
export type GraphqlResolvers = Record<string, unknown>;

/** A GraphQL response body and the HTTP status and media type to send it with. */
export interface GraphqlOutcome {
  status: number;
  /** The media type Accept chose (application/json when it names none of them). */
  type: string;
  body: ExecutionResult | { errors: readonly GraphQLError[] } | null;
  /** Set for 405 (and OPTIONS' 204): the methods the endpoint takes (a mutation: POST). */
  allow?: string;
}

/**
 * The methods a GraphQL endpoint takes, listed as the app's own 405 lists them for a GET + POST
 * route: HEAD is answered as GET, and OPTIONS with a 204, as on every routed path.
 */
const ALLOW = 'GET, POST, HEAD, OPTIONS';

/**
 * GraphQL over HTTP's own response type: the same JSON, whose status says whether the document
 * ran (no `data` entry: 4xx). UTF-8 said, as the spec's example says it.
 */
export const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json; charset=utf-8';
/**
 * What negotiator is offered, in keel's order of preference: application/json first, the
 * default for no Accept or `*\/*` (as graphql-http; legacy clients read only it). With the
 * charset sent, so an Accept naming `charset=utf-8` matches (negotiator matches an Accept's
 * parameters against the offer's) and one naming another charset does not.
 */
const OFFERED = ['application/json; charset=utf-8', GRAPHQL_RESPONSE_TYPE];

/** Accept values whose negotiated type is remembered (a few per client library in use). */
export const ACCEPT_MEMO_ENTRIES = 64;
/** Longer Accept values are negotiated every time, never kept: the memo stays within ~16 KiB. */
export const MAX_MEMO_ACCEPT = 256;
/**
 * Accept value -> the type negotiated for it (null: neither). Every GraphQL client sends the same
 * few values on each request, and negotiator parses one anew each time. Keyed by client input,
 * so bounded: the oldest entry goes first, and a client sending a new value on each request only
 * evicts (its requests cost what they cost without the memo).
 */
const acceptMemo = new Map<string, string | null>();

/**
 * The media type to answer in, from Accept (q-values, then the client's order, then keel's
 * preference), or null when it allows neither. An empty Accept lists nothing to choose among:
 * taken as none (RFC 9110 §12.5.1: no Accept, any type).
 */
export function graphqlResponseType(accept: string | undefined): string | null {
  // The usual values, without parsing: none, a browser's or fetch's `*/*`, a legacy client's.
  if (accept === undefined || accept === '*/*' || accept === 'application/json') return JSON_TYPE;
  const known = acceptMemo.get(accept);
  if (known !== undefined) return known;
  const type = negotiate(accept);
  if (accept.length <= MAX_MEMO_ACCEPT) setBounded(acceptMemo, accept, type, ACCEPT_MEMO_ENTRIES);
  return type;
}

/** Sets `key` in `map`, the oldest entry out first when it holds `max` already. */
function setBounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  if (map.size >= max) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

function negotiate(accept: string): string | null {
  if (accept.trim() === '') return JSON_TYPE;
  const chosen = new Negotiator({ headers: { accept } }).mediaType(OFFERED);
  if (chosen === undefined) return null;
  return chosen === GRAPHQL_RESPONSE_TYPE ? GRAPHQL_RESPONSE_TYPE : JSON_TYPE;
}

/**
 * Limits and switches for `ctx.graphql`, set once per app (`createApp({ graphql })`). Every
 * document is parsed with `maxTokens` and validated with graphql-js's rules plus these limits
 * before anything runs; a refused document is a 400 with GraphQL `errors`.
 */
export interface GraphqlOptions {
  /**
   * Tokens the parser reads before it gives up (graphql-js `parse` `maxTokens`; comments are not
   * tokens). Bounds parse and validation time: a deeply nested document is refused while parsed.
   *
   * @default 3000
   */
  maxTokens?: number | undefined;
  /** Deepest field nesting of an operation, through fragments. @default 12 */
  maxDepth?: number | undefined;
  /** Aliases in an operation (each alias can run a resolver once more). @default 30 */
  maxAliases?: number | undefined;
  /**
   * Cost of an operation: every field costs 1 plus its selection's cost, times `listFactor` for
   * each list around its type, so nested lists multiply as their results do.
   *
   * @default 20000
   */
  maxCost?: number | undefined;
  /** The length assumed for every list when computing cost. @default 10 */
  listFactor?: number | undefined;
  /**
   * Pairs of fields sharing a response path (a field repeated, or selected again through inline
   * fragments) that graphql-js's validation would compare: a path selected `n` times makes
   * `n * (n - 1) / 2`, and a named fragment spread pairs with each spread and field beside it.
   * Counted before validation; over it, 400. Bounds validation time, which is
   * quadratic in such repeats (`{ me { id } me { id } ... }` 745 times, 5 KiB, took graphql-js
   * about a second).
   *
   * @default 20000
   */
  maxFieldPairs?: number | undefined;
  /**
   * Allow `__schema` / `__type` queries (`__typename` is always allowed).
   *
   * @default the app's `development` (off when NODE_ENV is `production`)
   */
  introspection?: boolean | undefined;
  /**
   * Parsed documents are cached, least recently used out first, within this many bytes of query
   * text (a parsed document keeps its text, and takes ~20x its size in memory).
   *
   * @default 1048576 (1 MiB)
   */
  documentCacheBytes?: number | undefined;
  /** Documents longer than this (bytes of text) are parsed every time, never cached. @default 16384 */
  maxCachedDocumentBytes?: number | undefined;
}

/** {@link GraphqlOptions} resolved once per app. */
export interface GraphqlSettings {
  maxTokens: number;
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
  listFactor: number;
  maxFieldPairs: number;
  introspection: boolean;
  documentCacheBytes: number;
  maxCachedDocumentBytes: number;
}

function count(name: string, value: number | undefined, fallback: number, min: number): number {
  return integer(`graphql.${name}`, value, fallback, min);
}

/** Resolves and checks the options once, at the app boundary. */
const GRAPHQL_KEYS = keysOf<GraphqlOptions>({
  maxTokens: 0,
  maxDepth: 0,
  maxAliases: 0,
  maxCost: 0,
  listFactor: 0,
  maxFieldPairs: 0,
  introspection: 0,
  documentCacheBytes: 0,
  maxCachedDocumentBytes: 0,
});

export function resolveGraphqlOptions(
  options: GraphqlOptions = {},
  development: boolean,
): GraphqlSettings {
  checkOptions('graphql', options, GRAPHQL_KEYS);
  return {
    maxTokens: count('maxTokens', options.maxTokens, 3000, 1),
    maxDepth: count('maxDepth', options.maxDepth, 12, 1),
    maxAliases: count('maxAliases', options.maxAliases, 30, 0),
    maxCost: count('maxCost', options.maxCost, 20_000, 1),
    listFactor: count('listFactor', options.listFactor, 10, 1),
    maxFieldPairs: count('maxFieldPairs', options.maxFieldPairs, 20_000, 0),
    introspection: boolean('graphql.introspection', options.introspection, development),
    documentCacheBytes: count('documentCacheBytes', options.documentCacheBytes, 1024 * 1024, 0),
    maxCachedDocumentBytes: count(
      'maxCachedDocumentBytes',
      options.maxCachedDocumentBytes,
      16 * 1024,
      0,
    ),
  };
}

interface SchemaEntry {
  /** Tells the schema's documents apart in the shared cache. */
  id: number;
  schema: GraphQLSchema;
}

/** A cached document and the bytes of text it was counted as. */
interface CachedDocument {
  document: DocumentNode;
  bytes: number;
}

const MAX_SCHEMAS = 32;

/**
 * Deepest bracket nesting (`{`, `[`, `(`) a document may have. graphql-js's parser recurses once
 * (or more) per level and has no bound of its own: about 2000 nested `[` overflow the stack, in
 * fewer tokens than `maxTokens` allows.
 */
export const MAX_DOCUMENT_NESTING = 256;

/**
 * Whether `query` nests brackets deeper than MAX_DOCUMENT_NESTING, counted over graphql-js's
 * own tokens (strings, block strings and comments are no nesting), up to `maxTokens` of them
 * (the parser stops there). Iterative, so it cannot overflow; an unclosed bracket counts, as
 * the parser recurses before it finds the end. Throws the lexer's GraphQLError on bad syntax.
 */
function nestsTooDeep(query: string, maxTokens: number): boolean {
  // Too short to hold that many opening brackets.
  if (query.length <= MAX_DOCUMENT_NESTING) return false;
  const lexer = new Lexer(new Source(query));
  let depth = 0;
  for (let n = 0; n < maxTokens; n++) {
    const kind = lexer.advance().kind;
    if (kind === TokenKind.EOF) break;
    if (kind === TokenKind.BRACE_L || kind === TokenKind.BRACKET_L || kind === TokenKind.PAREN_L) {
      if (++depth > MAX_DOCUMENT_NESTING) return true;
    } else if (
      kind === TokenKind.BRACE_R ||
      kind === TokenKind.BRACKET_R ||
      kind === TokenKind.PAREN_R
    ) {
      // A closer with nothing open is a syntax error: the parser stops there.
      if (depth > 0) depth--;
    }
  }
  return false;
}

/** A GraphQL outcome without its media type: what {@link GraphqlRunner.run} adds. */
type Answer = Omit<GraphqlOutcome, 'type'>;

function requestError(status: number, message: string): Answer {
  return { status, body: { errors: [new GraphQLError(message)] } };
}

/**
 * The 400 for `variables` or `extensions` sent as a JSON string and read by {@link readJson}
 * (the rules of a JSON body, which the body reader applied to everything else: plain JSON.parse
 * let a `__proto__` key reach the resolvers and any depth reach JSON.stringify, a stack
 * overflow), or null when `read` is a value.
 */
function refusedJson(read: unknown, depth: number, what: string): Answer | null {
  if (read === MALFORMED_JSON) return requestError(400, `${what} are invalid JSON.`);
  if (read === FORBIDDEN_JSON_KEY) {
    return requestError(400, `${what} have a forbidden __proto__ or constructor.prototype key.`);
  }
  if (read === JSON_TOO_DEEP) {
    return requestError(400, `${what} are nested deeper than ${depth} levels.`);
  }
  return null;
}

/** A map, or none (null, or left out): what `variables` and `extensions` may be once read. */
function isMapOrNone(value: unknown): boolean {
  return (
    value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value))
  );
}

/** Resolves `Type.field` from by-type resolvers, or root fields from a root-value object. */
function fieldResolverFor(resolvers: GraphqlResolvers): GraphQLFieldResolver<unknown, unknown> {
  return (parent, args, context, info) => {
    const byType = resolvers[info.parentType.name];
    if (typeof byType === 'object' && byType !== null && Object.hasOwn(byType, info.fieldName)) {
      const field = (byType as Record<string, unknown>)[info.fieldName];
      return typeof field === 'function' ? field(parent, args, context, info) : field;
    }
    return defaultFieldResolver(parent, args, context, info);
  };
}

/** What the request carries: from the JSON body for POST, from the query string for GET. */
export interface GraphqlParams {
  query: unknown;
  variables: unknown;
  operationName: unknown;
  /** Checked (a map, or none) and otherwise ignored: keel runs no extension. */
  extensions: unknown;
}

/**
 * Runs GraphQL-over-HTTP requests for one app: builds each schema string once, parses with a
 * token limit, validates with graphql-js's rules plus the app's limits, and caches parsed and
 * validated documents within a byte budget.
 */
export class GraphqlRunner {
  readonly settings: GraphqlSettings;
  readonly #rules: readonly ValidationRule[];
  readonly #schemas = new Map<string, SchemaEntry>();
  /** Key: schema id, newline, query text. Map order is recency: the first entry goes first. */
  readonly #documents = new Map<string, CachedDocument>();
  #cachedBytes = 0;
  #nextId = 0;

  constructor(settings: GraphqlSettings) {
    this.settings = settings;
    const rules: ValidationRule[] = [...specifiedRules, operationLimitsRule(settings)];
    if (!settings.introspection) rules.push(NoSchemaIntrospectionCustomRule);
    this.#rules = rules;
  }

  /**
   * The handler that answers a body the body reader refused with a 400 (malformed JSON, a
   * `__proto__` key, nested too deep) as a GraphQL response, or null to throw it as any route
   * does. The body is refused before the route's handler runs, so before anything says the route
   * is a GraphQL one; a client preferring `application/graphql-response+json` says it is a GraphQL
   * client, and a body of that type is a GraphQL response (`{ errors }`), not `{ status, error }`.
   */
  refusedBody(err: unknown, accept: string | undefined): ((ctx: Context) => void) | null {
    if (!isHttpException(err) || err.status !== 400) return null;
    if (graphqlResponseType(accept) !== GRAPHQL_RESPONSE_TYPE) return null;
    const body = JSON.stringify({ errors: [{ message: err.message }] });
    return (ctx) => {
      vary(ctx.res, 'Accept');
      ctx.status(400).setHeader('content-type', GRAPHQL_RESPONSE_TYPE).send(body);
    };
  }

  /** Cached documents and the bytes of query text they hold. */
  get cache(): { documents: number; bytes: number } {
    return { documents: this.#documents.size, bytes: this.#cachedBytes };
  }

  /** Builds each schema string once; a small map because schemas are app constants. */
  #schemaFor(sdl: string): SchemaEntry {
    let entry = this.#schemas.get(sdl);
    if (entry === undefined) {
      entry = { id: this.#nextId++, schema: buildSchema(sdl) };
      setBounded(this.#schemas, sdl, entry, MAX_SCHEMAS);
    }
    return entry;
  }

  /** A parsed and validated document, or the errors that refuse it. */
  #document(entry: SchemaEntry, query: string): DocumentNode | readonly GraphQLError[] {
    const key = `${entry.id}\n${query}`;
    const cached = this.#documents.get(key);
    if (cached !== undefined) {
      this.#documents.delete(key); // most recently used goes last
      this.#documents.set(key, cached);
      return cached.document;
    }
    let document: DocumentNode;
    try {
      if (nestsTooDeep(query, this.settings.maxTokens)) {
        return [
          new GraphQLError(
            `The document nests brackets deeper than ${MAX_DOCUMENT_NESTING} levels.`,
          ),
        ];
      }
      document = parse(query, { maxTokens: this.settings.maxTokens });
    } catch (err) {
      if (err instanceof GraphQLError) return [err];
      throw err;
    }
    const pairs = this.settings.maxFieldPairs;
    if (tooManyFieldPairs(document, pairs)) {
      return [
        new GraphQLError(
          'The document repeats fields or fragment spreads at one response path too often: ' +
            `validation would compare more than ${pairs} pairs of them.`,
        ),
      ];
    }
    // Through fragment spreads, which graphql-js (and the limits rule) follow by recursion.
    if (nestsTooDeepThroughFragments(document, MAX_DOCUMENT_NESTING)) {
      return [
        new GraphQLError(
          `The document nests deeper than ${MAX_DOCUMENT_NESTING} levels through fragment spreads.`,
        ),
      ];
    }
    const cycles = fragmentCycles(document);
    if (cycles.length > 0) return cycles;
    const errors = validate(entry.schema, document, this.#rules);
    if (errors.length > 0) return errors;
    const bytes = Buffer.byteLength(query);
    const { documentCacheBytes, maxCachedDocumentBytes } = this.settings;
    if (bytes <= maxCachedDocumentBytes && bytes <= documentCacheBytes) {
      for (const [oldKey, old] of this.#documents) {
        if (this.#cachedBytes + bytes <= documentCacheBytes) break;
        this.#documents.delete(oldKey);
        this.#cachedBytes -= old.bytes;
      }
      this.#documents.set(key, { document, bytes });
      this.#cachedBytes += bytes;
    }
    return document;
  }

  /**
   * Runs one GraphQL-over-HTTP request. Request errors (no query, syntax, limits, validation,
   * bad variables) are 400 with `errors`; field errors are in `errors` with 200: the status rules
   * of application/graphql-response+json (no `data` entry: 4xx), kept for application/json as
   * the spec allows legacy servers. The media type is the one Accept prefers of the two; one
   * that allows neither is a 406 before anything else is looked at (the spec's RECOMMENDED
   * answer), after the method. A POST must be `application/json` (else 415): a form or
   * text/plain POST is what any page can send across sites without a preflight, so accepting
   * one would let it run mutations (CSRF). GraphQLError's JSON form carries message, locations
   * and path only, never a stack. `jsonDepth` is the route's `maxJsonDepth`, for `variables`
   * sent as a JSON string.
   */
  async run(
    method: string,
    headers: IncomingHttpHeaders,
    params: GraphqlParams,
    sdl: string,
    resolvers: GraphqlResolvers | undefined,
    contextValue: unknown,
    jsonDepth: number,
  ): Promise<GraphqlOutcome> {
    // HEAD is a GET without the body (the app falls back to the GET route for it).
    if (method === 'HEAD') method = 'GET';
    // Mounted for every method (`app.all`): OPTIONS as the app answers it on a routed path.
    if (method === 'OPTIONS') return { status: 204, type: JSON_TYPE, body: null, allow: ALLOW };
    const type = graphqlResponseType(headers.accept);
    if (method !== 'GET' && method !== 'POST') {
      const refused = requestError(405, 'GraphQL accepts only GET and POST.');
      return { ...refused, type: type ?? JSON_TYPE, allow: ALLOW };
    }
    if (type === null) {
      const refused = requestError(
        406,
        'Accept allows neither application/graphql-response+json nor application/json, the types GraphQL responses are sent as.',
      );
      return { ...refused, type: JSON_TYPE };
    }
    const contentType = headers['content-type'];
    const answer = await this.#answer({
      method,
      contentType,
      params,
      sdl,
      resolvers,
      contextValue,
      jsonDepth,
    });
    return { ...answer, type };
  }

  /** {@link run} for a GET or POST whose Accept allows a GraphQL response type. */
  async #answer(request: AnswerRequest): Promise<Answer> {
    const { method, contentType, params, sdl, resolvers, contextValue, jsonDepth } = request;
    if (method === 'POST' && !isJson(contentType)) {
      return requestError(415, 'GraphQL POST requests must be sent as application/json.');
    }
    const query = params.query;
    let { operationName, variables, extensions } = params;
    if (typeof query !== 'string' || query === '') {
      return requestError(400, 'Must provide query string.');
    }
    if (method === 'GET') {
      // GraphQL over HTTP: on GET the empty string is the parameter omitted (a form or
      // URLSearchParams sends every field, filled or not); graphql-http reads `variables` so.
      if (operationName === '') operationName = undefined;
      if (variables === '') variables = undefined;
      if (extensions === '') extensions = undefined;
    } else if (operationName === '') {
      // A JSON body has null for "none"; `""` names an operation no document can have (a name is
      // never empty), refused as graphql-js and graphql-http refuse it, but saying why.
      return requestError(
        400,
        'operationName is the empty string, which names no operation: omit it or send null.',
      );
    }
    if (
      operationName !== undefined &&
      operationName !== null &&
      typeof operationName !== 'string'
    ) {
      return requestError(400, 'operationName must be a string.');
    }
    if (typeof variables === 'string') {
      // The GET form's (and a POST may send them so).
      variables = readJson(variables, jsonDepth);
      const refused = refusedJson(variables, jsonDepth, 'Variables');
      if (refused !== null) return refused;
    }
    if (!isMapOrNone(variables)) return requestError(400, 'Variables must be an object.');
    // A map in the spec (GET: its JSON text). Nothing in keel reads one, but another value is a
    // malformed request: 400, as graphql-http answers (its audits check it). A string in a JSON
    // body is such a value (graphql-http's too), unlike `variables`, kept for older clients.
    if (method === 'GET' && typeof extensions === 'string') {
      extensions = readJson(extensions, jsonDepth);
      const refused = refusedJson(extensions, jsonDepth, 'Extensions');
      if (refused !== null) return refused;
    }
    if (!isMapOrNone(extensions)) return requestError(400, 'Extensions must be an object.');
    const entry = this.#schemaFor(sdl);
    const document = this.#document(entry, query);
    if (!('kind' in document)) return { status: 400, body: { errors: document } };
    const operation = getOperationAST(document, operationName ?? undefined);
    if (operation === null || operation === undefined) {
      // Worded as graphql-js's execute words it. (A document without any operation is refused
      // by validation before: its fragments are unused.)
      return requestError(
        400,
        operationName != null
          ? `Unknown operation named "${operationName}".`
          : 'Must provide operation name if query contains multiple operations.',
      );
    }
    if (operation.operation === 'mutation' && method !== 'POST') {
      return { ...requestError(405, 'Mutations are only allowed over POST.'), allow: 'POST' };
    }
    if (operation.operation === 'subscription') {
      return requestError(400, 'Subscriptions are not supported over this endpoint.');
    }
    const result = await execute({
      schema: entry.schema,
      document,
      rootValue: resolvers,
      contextValue,
      variableValues: (variables ?? undefined) as Record<string, unknown> | undefined,
      operationName: (operationName ?? undefined) as string | undefined,
      fieldResolver: resolvers === undefined ? undefined : fieldResolverFor(resolvers),
    });
    // No `data` key means the request failed before execution (e.g. variable coercion).
    return { status: 'data' in result ? 200 : 400, body: result };
  }
}

/** What {@link GraphqlRunner}'s `#answer` reads of a request: named, not seven in a row. */
interface AnswerRequest {
  /** GET or POST (HEAD is answered as GET). */
  method: string;
  contentType: string | undefined;
  params: GraphqlParams;
  sdl: string;
  resolvers: GraphqlResolvers | undefined;
  contextValue: unknown;
  /** The route's maxJsonDepth, for `variables` / `extensions` sent as JSON text. */
  jsonDepth: number;
}

/**
 * `application/json`, with or without parameters (a charset other than UTF-8 is refused by the
 * body reader first): the body reader's own check, allocating nothing.
 */
function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && isMediaType(contentType, 'application/json');
}
