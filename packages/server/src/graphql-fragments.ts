import {
  type DefinitionNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  GraphQLError,
  Kind,
  type SelectionSetNode,
} from 'graphql';

// graphql-js recurses once (or more) per fragment spread: NoFragmentCycles and
// OverlappingFieldsCanBeMerged in validation, collectFields in execution, and keel's own limits
// rule. The bracket check bounds the nesting of one definition only: a chain of fragments (A
// spreads B spreads C...) nests as deep as the chain is long, ~6000 fragments in 50,000 tokens,
// and overflowed the stack (a 500). Both checks here run before validation and are iterative
// across fragments; inside one definition they recurse at most as deep as its brackets nest.

/** Fragments by name; the last of a name counts, as graphql-js's `getFragment` has it. */
function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  return fragments;
}

/** A definition's own nesting (its selection set is level 1) and where it spreads fragments. */
interface Shape {
  depth: number;
  spreads: { name: string; level: number }[];
}

function shapeOf(set: SelectionSetNode): Shape {
  const shape: Shape = { depth: 0, spreads: [] };
  const walk = (inner: SelectionSetNode, level: number): void => {
    if (level > shape.depth) shape.depth = level;
    for (const node of inner.selections) {
      if (node.kind === Kind.FRAGMENT_SPREAD) shape.spreads.push({ name: node.name.value, level });
      else if (node.selectionSet !== undefined) walk(node.selectionSet, level + 1);
    }
  };
  walk(set, 1);
  return shape;
}

interface NestingFrame {
  shape: Shape;
  /** Level of this definition's selection set below the root's: the spreads on the path. */
  base: number;
  next: number;
  /** Deepest level found below this definition, counted from its own selection set. */
  depth: number;
  /** Set for a fragment (memoized once done). */
  fragment: FragmentDefinitionNode | null;
}

/**
 * Whether a definition nests selection sets deeper than `limit`, counting through the fragments
 * it spreads (a spread at level `n` puts the fragment's selection at `n + 1`). Every definition
 * is a root, unused fragments too (validation visits them). A spread back into a fragment on the
 * path (a cycle) adds nothing here: {@link fragmentCycles} reports it, and a long cycle is a long
 * path first. Each fragment is measured once.
 */
export function nestsTooDeepThroughFragments(document: DocumentNode, limit: number): boolean {
  const fragments = fragmentsOf(document);
  /** A fragment's depth once done; -1 while it is on the path. */
  const depths = new Map<FragmentDefinitionNode, number>();
  const frame = (
    definition: DefinitionNode & { selectionSet: SelectionSetNode },
    base: number,
    fragment: FragmentDefinitionNode | null,
  ): NestingFrame => {
    if (fragment !== null) depths.set(fragment, -1);
    const shape = shapeOf(definition.selectionSet);
    return { shape, base, next: 0, depth: shape.depth, fragment };
  };
  for (const definition of document.definitions) {
    if (
      definition.kind !== Kind.OPERATION_DEFINITION &&
      definition.kind !== Kind.FRAGMENT_DEFINITION
    ) {
      continue;
    }
    const own = definition.kind === Kind.FRAGMENT_DEFINITION ? definition : null;
    if (own !== null && depths.has(own)) continue;
    const stack = [frame(definition, 0, own)];
    if (stack[0]!.depth > limit) return true;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const spread = top.shape.spreads[top.next++];
      if (spread === undefined) {
        stack.pop();
        if (top.fragment !== null) depths.set(top.fragment, top.depth);
        const parent = stack[stack.length - 1];
        if (parent !== undefined) {
          const through = top.base - parent.base + top.depth;
          if (through > parent.depth) parent.depth = through;
        }
        continue;
      }
      const target = fragments.get(spread.name);
      if (target === undefined) continue; // KnownFragmentNames reports it
      const known = depths.get(target);
      if (known === undefined) {
        const next = frame(target, top.base + spread.level, target);
        if (next.base + next.depth > limit) return true;
        stack.push(next);
      } else if (known !== -1) {
        const through = spread.level + known;
        if (top.base + through > limit) return true;
        if (through > top.depth) top.depth = through;
      }
    }
  }
  return false;
}

/** graphql-js's `getFragmentSpreads`: the spreads in a selection set, in its order. */
function spreadsOf(set: SelectionSetNode): FragmentSpreadNode[] {
  const spreads: FragmentSpreadNode[] = [];
  const toVisit = [set];
  for (let next = toVisit.pop(); next !== undefined; next = toVisit.pop()) {
    for (const node of next.selections) {
      if (node.kind === Kind.FRAGMENT_SPREAD) spreads.push(node);
      else if (node.selectionSet !== undefined) toVisit.push(node.selectionSet);
    }
  }
  return spreads;
}

interface CycleFrame {
  name: string;
  spreads: FragmentSpreadNode[];
  next: number;
}

/**
 * graphql-js's NoFragmentCycles rule without its recursion: the same depth-first search, the
 * same errors in the same order. Run before validation; a document it refuses is not validated
 * further (graphql-js's rule recurses once per fragment on the path, and so does keel's limits
 * rule on a cycle).
 */
export function fragmentCycles(document: DocumentNode): GraphQLError[] {
  const fragments = fragmentsOf(document);
  const errors: GraphQLError[] = [];
  const visited = new Set<string>();
  const spreadPath: FragmentSpreadNode[] = [];
  const indexByName = new Map<string, number>();
  const enter = (fragment: FragmentDefinitionNode): CycleFrame | null => {
    const name = fragment.name.value;
    if (visited.has(name)) return null;
    visited.add(name);
    const spreads = spreadsOf(fragment.selectionSet);
    if (spreads.length === 0) return null;
    indexByName.set(name, spreadPath.length);
    return { name, spreads, next: 0 };
  };
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.FRAGMENT_DEFINITION) continue;
    const first = enter(definition);
    if (first === null) continue;
    const stack = [first];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const spread = top.spreads[top.next++];
      if (spread === undefined) {
        stack.pop();
        indexByName.delete(top.name);
        if (stack.length > 0) spreadPath.pop(); // the spread that led here
        continue;
      }
      const name = spread.name.value;
      const cycleIndex = indexByName.get(name);
      spreadPath.push(spread);
      if (cycleIndex === undefined) {
        const target = fragments.get(name);
        const next = target === undefined ? null : enter(target);
        if (next !== null) {
          stack.push(next);
          continue;
        }
      } else {
        const cyclePath = spreadPath.slice(cycleIndex);
        const via = cyclePath
          .slice(0, -1)
          .map((s) => `"${s.name.value}"`)
          .join(', ');
        errors.push(
          new GraphQLError(
            `Cannot spread fragment "${name}" within itself${via !== '' ? ` via ${via}.` : '.'}`,
            { nodes: cyclePath },
          ),
        );
      }
      spreadPath.pop();
    }
  }
  return errors;
}
