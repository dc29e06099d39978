import {
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  GraphQLError,
  type GraphQLField,
  type GraphQLOutputType,
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  SchemaMetaFieldDef,
  type SelectionSetNode,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  typeFromAST,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/** The per-operation limits the rule enforces (resolved and checked by the runner). */
export interface OperationLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
  listFactor: number;
}

/**
 * What a selection set adds up to; depth is counted in fields below the set's owner. `lists` is
 * the deepest nesting of lists inside an introspection field (`__schema`, `__type`) within it.
 */
interface Measure {
  depth: number;
  aliases: number;
  cost: number;
  lists: number;
}

const ZERO: Measure = { depth: 0, aliases: 0, cost: 0, lists: 0 };

/**
 * Lists an introspection field may nest: the standard introspection query (graphql-js's
 * getIntrospectionQuery, which GraphiQL and codegen send) nests `types > fields > args`. Each
 * such list is bounded by the schema, not by the request; a fourth can only re-enter a type's
 * lists (`types { fields { type { fields ...`), which multiplies the answer at every level.
 */
const MAX_INTROSPECTION_LISTS = 3;

/** The field definition for `name` on `parent`, meta fields included; undefined if unknown. */
function fieldOf(
  context: ValidationContext,
  parent: GraphQLCompositeType | undefined,
  name: string,
): GraphQLField<unknown, unknown> | undefined {
  if (parent === undefined) return undefined;
  if (name === '__typename') return TypeNameMetaFieldDef;
  if (parent === context.getSchema().getQueryType()) {
    if (name === '__schema') return SchemaMetaFieldDef;
    if (name === '__type') return TypeMetaFieldDef;
  }
  if (isObjectType(parent) || isInterfaceType(parent)) return parent.getFields()[name];
  return undefined;
}

/** The list wrappers around a type: `[[T]!]` has two. */
function listsAround(type: GraphQLOutputType | undefined): number {
  let lists = 0;
  let t: GraphQLOutputType | undefined = type;
  while (t !== undefined) {
    if (isNonNullType(t)) t = t.ofType;
    else if (isListType(t)) {
      lists++;
      t = t.ofType as GraphQLOutputType;
    } else break;
  }
  return lists;
}

/**
 * `measure` of a fragment's selection, once per fragment and document (a fragment spread ten
 * times is measured once); a fragment cycle counts as `empty` (fragmentCycles refuses such a
 * document before validation; kept as a guard).
 */
function perFragment<M>(
  context: ValidationContext,
  measure: (set: SelectionSetNode, parent: GraphQLCompositeType | undefined) => M,
  empty: M,
): (node: FragmentDefinitionNode) => M {
  const known = new Map<string, M>();
  const visiting = new Set<string>();
  return (node) => {
    const name = node.name.value;
    const found = known.get(name);
    if (found !== undefined) return found;
    if (visiting.has(name)) return empty;
    visiting.add(name);
    const type = typeFromAST(context.getSchema(), node.typeCondition);
    const measured = measure(node.selectionSet, isCompositeType(type) ? type : undefined);
    visiting.delete(name);
    known.set(name, measured);
    return measured;
  };
}

/**
 * One validation rule for depth, aliases and cost of each operation, fragments included: a
 * field costs 1, plus what its selection costs, times `listFactor` for every list around its
 * type (so nested lists multiply, as their results do). Linear in the document: each fragment
 * is measured once; a fragment cycle counts as empty here (fragmentCycles refuses it first).
 * Its recursion follows fragment spreads: nestsTooDeepThroughFragments bounds it. An introspection field (`__schema`, `__type`) counts as one field of depth and
 * cost 1, as graphql-depth-limit and GraphQL Armor leave introspection out (its standard query is
 * 15 deep and costs ~51000): what it selects is bounded by nesting at most
 * {@link MAX_INTROSPECTION_LISTS} lists instead; its aliases count as any.
 */
export function operationLimitsRule(limits: OperationLimits): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const fragment = perFragment(context, (set, parent) => selection(set, parent, false), ZERO);
    const metaFragment = perFragment(context, (set, parent) => selection(set, parent, true), ZERO);

    /**
     * What a selection set adds up to. Inside an introspection field (`meta`) a field adds no
     * depth or cost; the lists around its type count toward `lists` instead.
     */
    function selection(
      set: SelectionSetNode,
      parent: GraphQLCompositeType | undefined,
      meta: boolean,
    ): Measure {
      let depth = 0;
      let aliases = 0;
      let cost = 0;
      let lists = 0;
      for (const node of set.selections) {
        let inner: Measure;
        if (node.kind === Kind.FIELD) {
          if (node.alias !== undefined) aliases++;
          const field = fieldOf(context, parent, node.name.value);
          const named = field === undefined ? undefined : getNamedType(field.type);
          // `__schema` / `__type`: one field of depth and cost 1, its selection bounded by lists.
          const entersMeta = !meta && (field === SchemaMetaFieldDef || field === TypeMetaFieldDef);
          const below =
            node.selectionSet === undefined
              ? ZERO
              : selection(
                  node.selectionSet,
                  isCompositeType(named) ? named : undefined,
                  meta || entersMeta,
                );
          if (meta) {
            const nested = listsAround(field?.type) + below.lists;
            inner = { depth: 0, aliases: below.aliases, cost: 0, lists: nested };
          } else if (entersMeta) {
            inner = { depth: 1, aliases: below.aliases, cost: 1, lists: below.lists };
          } else {
            const factor = limits.listFactor ** listsAround(field?.type);
            inner = {
              depth: below.depth + 1,
              aliases: below.aliases,
              cost: factor * (1 + below.cost),
              lists: below.lists,
            };
          }
        } else if (node.kind === Kind.INLINE_FRAGMENT) {
          const type =
            node.typeCondition === undefined
              ? parent
              : typeFromAST(context.getSchema(), node.typeCondition);
          inner = selection(node.selectionSet, isCompositeType(type) ? type : undefined, meta);
        } else {
          const definition = context.getFragment(node.name.value);
          inner =
            definition === undefined || definition === null
              ? ZERO
              : (meta ? metaFragment : fragment)(definition);
        }
        depth = Math.max(depth, inner.depth);
        aliases += inner.aliases;
        cost += inner.cost;
        lists = Math.max(lists, inner.lists);
      }
      return { depth, aliases, cost, lists };
    }

    return {
      OperationDefinition(node) {
        const schema = context.getSchema();
        const root =
          node.operation === 'query'
            ? schema.getQueryType()
            : node.operation === 'mutation'
              ? schema.getMutationType()
              : schema.getSubscriptionType();
        const { depth, aliases, cost, lists } = selection(
          node.selectionSet,
          root ?? undefined,
          false,
        );
        const name = node.name === undefined ? 'The operation' : `Operation "${node.name.value}"`;
        if (lists > MAX_INTROSPECTION_LISTS) {
          context.reportError(
            new GraphQLError(
              `${name}'s introspection nests ${lists} lists; the limit is ${MAX_INTROSPECTION_LISTS}.`,
              { nodes: node },
            ),
          );
        }
        if (depth > limits.maxDepth) {
          context.reportError(
            new GraphQLError(`${name} is ${depth} fields deep; the limit is ${limits.maxDepth}.`, {
              nodes: node,
            }),
          );
        }
        if (aliases > limits.maxAliases) {
          context.reportError(
            new GraphQLError(
              `${name} uses ${aliases} aliases; the limit is ${limits.maxAliases}.`,
              { nodes: node },
            ),
          );
        }
        if (cost > limits.maxCost) {
          const shown = Number.isFinite(cost) && cost < 1e15 ? String(cost) : cost.toExponential(2);
          context.reportError(
            new GraphQLError(
              `${name} costs ${shown}; the limit is ${limits.maxCost} (each field costs 1, ` +
                `times ${limits.listFactor} for every list it is in).`,
              { nodes: node },
            ),
          );
        }
      },
    };
  };
}

/** A response path: how often it was selected, and what its selection holds so far. */
interface Path {
  id: number;
  /** Fields selected at this path (each pairs with every earlier one). */
  count: number;
  /** Fields directly below it, any name. */
  fields: number;
  /** Named fragment spreads directly below it. */
  spreads: number;
}

/**
 * Whether graphql-js's OverlappingFieldsCanBeMerged rule would compare more than `limit` pairs in
 * `document`. It compares every two fields that share a response path (a field repeated, or
 * selected again by inline fragments; their selections are merged and compared pair by pair in
 * turn), so a path selected `n` times costs `n * (n - 1) / 2` comparisons: quadratic in a
 * document `maxTokens` lets through. A named fragment spread is compared with every other spread
 * and every field of its selection: it counts as a pair with each. Counted in one linear pass,
 * before validation: every operation and fragment (unused ones too: the rule visits them),
 * inline fragments flattened into their parent as the rule does, a fragment's fields where it is
 * defined (not copied to every spread). Paths are numbered, not spelled out: a field costs its
 * own name, however long the names above it. Recursive, at most as deep as the document nests
 * brackets (checked before it was parsed).
 */
export function tooManyFieldPairs(document: DocumentNode, limit: number): boolean {
  /** `${parent path id} ${response name}` -> the path. */
  const paths = new Map<string, Path>();
  let pairs = 0;
  const walk = (set: SelectionSetNode, parent: Path): boolean => {
    for (const node of set.selections) {
      if (node.kind === Kind.FIELD) {
        const key = `${parent.id} ${(node.alias ?? node.name).value}`;
        let path = paths.get(key);
        if (path === undefined) {
          path = { id: paths.size + 1, count: 0, fields: 0, spreads: 0 };
          paths.set(key, path);
        }
        pairs += path.count++ + parent.spreads;
        parent.fields++;
        if (pairs > limit) return true;
        if (node.selectionSet !== undefined && walk(node.selectionSet, path)) return true;
      } else if (node.kind === Kind.INLINE_FRAGMENT) {
        if (walk(node.selectionSet, parent)) return true;
      } else {
        pairs += parent.spreads++ + parent.fields;
        if (pairs > limit) return true;
      }
    }
    return false;
  };
  let root = 0;
  for (const definition of document.definitions) {
    if (
      (definition.kind === Kind.OPERATION_DEFINITION ||
        definition.kind === Kind.FRAGMENT_DEFINITION) &&
      // Each definition's root is a path of its own (path ids are positive).
      walk(definition.selectionSet, { id: --root, count: 1, fields: 0, spreads: 0 })
    ) {
      return true;
    }
  }
  return false;
}
