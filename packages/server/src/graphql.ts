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
  parse,
  validate,
} from 'graphql';

/**
 * Resolvers for `ctx.graphql`, in either shape:
 * - by type: `{ Query: { user: (parent, args, ctx, info) => ... }, User: { ... } }`
 * - as a root value: `{ user: (args, ctx, info) => ... }` (graphql-js `rootValue` style)
 */
export type GraphqlResolvers = Record<string, unknown>;

/** A GraphQL response body and the HTTP status to send it with. */
export interface GraphqlOutcome {
  status: number;
  body: ExecutionResult | { errors: readonly GraphQLError[] };
  /** Set for 405: mutations are only accepted over POST. */
  allow?: string;
}

interface SchemaEntry {
  schema: GraphQLSchema;
  /** Parsed and validated documents by query text (bounded). */
  documents: Map<string, DocumentNode>;
}

const MAX_SCHEMAS = 32;
const MAX_DOCUMENTS = 256;
const schemas = new Map<string, SchemaEntry>();

/** Builds each schema string once; a small map because schemas are app constants. */
function schemaFor(sdl: string): SchemaEntry {
  let entry = schemas.get(sdl);
  if (entry === undefined) {
    entry = { schema: buildSchema(sdl), documents: new Map() };
    if (schemas.size >= MAX_SCHEMAS) schemas.delete(schemas.keys().next().value as string);
    schemas.set(sdl, entry);
  }
  return entry;
}

function requestError(status: number, message: string): GraphqlOutcome {
  return { status, body: { errors: [new GraphQLError(message)] } };
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
}

/**
 * Runs one GraphQL-over-HTTP request. Request errors (no query, syntax, validation, bad
 * variables) are 400 with `errors`; field errors are in `errors` with 200. GraphQLError's JSON
 * form carries message, locations and path only, never a stack.
 */
export async function runGraphql(
  method: string,
  params: GraphqlParams,
  sdl: string,
  resolvers: GraphqlResolvers | undefined,
  contextValue: unknown,
): Promise<GraphqlOutcome> {
  if (method !== 'GET' && method !== 'POST') {
    return { ...requestError(405, 'GraphQL accepts only GET and POST.'), allow: 'GET, POST' };
  }
  const { query, operationName } = params;
  if (typeof query !== 'string' || query === '') {
    return requestError(400, 'Must provide query string.');
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    return requestError(400, 'operationName must be a string.');
  }
  let variables = params.variables;
  if (typeof variables === 'string') {
    try {
      variables = JSON.parse(variables);
    } catch {
      return requestError(400, 'Variables are invalid JSON.');
    }
  }
  if (
    variables !== undefined &&
    variables !== null &&
    (typeof variables !== 'object' || Array.isArray(variables))
  ) {
    return requestError(400, 'Variables must be an object.');
  }
  const entry = schemaFor(sdl);
  let document = entry.documents.get(query);
  if (document === undefined) {
    try {
      document = parse(query);
    } catch (err) {
      if (err instanceof GraphQLError) return { status: 400, body: { errors: [err] } };
      throw err;
    }
    const errors = validate(entry.schema, document);
    if (errors.length > 0) return { status: 400, body: { errors } };
    if (entry.documents.size >= MAX_DOCUMENTS) entry.documents.clear();
    entry.documents.set(query, document);
  }
  const operation = getOperationAST(document, operationName ?? undefined);
  if (operation === null || operation === undefined) {
    return requestError(400, 'Could not determine which operation to run.');
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
