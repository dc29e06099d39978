import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  literalOf,
  NOT_A_LITERAL,
  type OptionField,
  optionTypes,
} from '../scripts/option-docs.mjs';
import { ROOT } from './blocks';

/**
 * The tables of defaults in the READMEs against the `@default` of each option's JSDoc (which the
 * packages' option-docs tests hold to the constants the code resolves its defaults from): a
 * default changed in the code and its JSDoc, but not in the README's table, fails here.
 */

/** Every exported interface of a package's sources, field paths `Type.field(.sub)`. */
function fieldsOf(pkg: string): Map<string, OptionField> {
  const types = optionTypes(join(ROOT, 'packages', pkg, 'src'), () => true);
  return new Map([...types.values()].flat().map((f) => [f.path, f]));
}

/** A README table of defaults: the first table after `heading`, its options fields of `type`. */
interface Table {
  readme: string;
  heading: string;
  type: string;
  /** The column holding the default (0-based); the option's name is column 0. */
  column?: number;
  /** An option whose default is an object of another type's fields: option -> that type. */
  nested?: Record<string, string>;
  /** Types `type` extends: an option not declared on it is looked up there. */
  bases?: string[];
}

const TABLES: Table[] = [
  {
    readme: 'packages/core/README.md',
    heading: '## Options and defaults',
    type: 'ClientOptions',
    nested: {
      cache: 'CacheOptions',
      retry: 'RetryOptions',
      circuitBreaker: 'CircuitBreakerOptions',
      intelligence: 'IntelligenceOptions',
    },
  },
  { readme: 'packages/core/README.md', heading: '## Scheduler', type: 'SchedulerOptions' },
  {
    readme: 'packages/server/README.md',
    heading: '## The app',
    type: 'AppOptions',
    nested: { sse: 'SseOptions' },
    bases: ['ServerTimeouts'],
  },
  { readme: 'packages/server/README.md', heading: '### GraphQL', type: 'GraphqlOptions' },
  { readme: 'packages/server/README.md', heading: '### CORS', type: 'CorsOptions' },
  { readme: 'packages/server/README.md', heading: '### Compression', type: 'CompressionOptions' },
  {
    readme: 'packages/server/README.md',
    heading: '**Topics and authorization.**',
    type: 'EventHubOptions',
  },
  {
    readme: 'packages/server/README.md',
    heading: '#### Many instances: Redis Streams',
    type: 'RedisStreamsOptions',
  },
  { readme: 'packages/devtools/README.md', heading: '## Props', type: 'KeelDevtoolsProps' },
];

const PACKAGE: Record<string, string> = {
  'packages/core/README.md': 'core',
  'packages/server/README.md': 'server',
  'packages/devtools/README.md': 'devtools',
};

/**
 * The rows of the first table with a `default` column after the line starting with `heading`:
 * each row's cells.
 */
function rowsAfter(readme: string, heading: string): string[][] {
  const lines = readFileSync(join(ROOT, readme), 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith(heading));
  if (start === -1) throw new Error(`${readme}: no line starts with ${heading}`);
  let i = start + 1;
  while (i < lines.length && !(lines[i]!.startsWith('|') && /\|\s*default\s*\|/.test(lines[i]!))) {
    i++;
  }
  const rows: string[][] = [];
  // Skip the header and the separator.
  for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i++) {
    // A cell may hold an escaped `\|` (`string \| undefined`): split on the others only.
    rows.push(
      lines[i]!.split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((c) => c.replace(/\\\|/g, '|').trim()),
    );
  }
  return rows;
}

/** `1 000` and `10 000` as numbers, `none` as undefined, else the literal a cell starts with. */
function cellValue(cell: string): unknown {
  if (cell === 'none') return undefined;
  const text = cell
    .replace(/^`([^`]*)`.*$/, '$1')
    .replace(/^(\d{1,3}(?: \d{3})+)\b/, (n) => n.replace(/ /g, ''));
  return literalOf(text);
}

function isEmpty(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

function plain(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? JSON.parse(JSON.stringify(value)) : value;
}

describe('README tables of defaults agree with the options JSDoc @default', () => {
  const fields = new Map(Object.values(PACKAGE).map((p) => [p, fieldsOf(p)]));

  it.each(TABLES.map((t) => [`${t.readme} ${t.heading}`, t] as const))('%s', (_, table) => {
    const known = fields.get(PACKAGE[table.readme]!)!;
    const problems: string[] = [];
    let compared = 0;
    const compare = (name: string, readmeValue: unknown, path: string) => {
      const field =
        known.get(path) ??
        table.bases?.map((b) => known.get(path.replace(table.type, b))).find(Boolean);
      if (field === undefined) {
        problems.push(`${name}: no option ${path}`);
        return;
      }
      const documented = field.default === undefined ? NOT_A_LITERAL : literalOf(field.default);
      if (documented === NOT_A_LITERAL) return;
      compared++;
      // "none" for an empty list or object (`@default {} (none)`) says the same.
      if (readmeValue === undefined && isEmpty(documented)) return;
      if (!isDeepStrictEqual(plain(readmeValue), plain(documented))) {
        problems.push(
          `${name}: the README says ${JSON.stringify(readmeValue)}, ${path} @default ${field.default}`,
        );
      }
    };
    for (const row of rowsAfter(table.readme, table.heading)) {
      const names = [...row[0]!.matchAll(/`([\w.]+)`/g)].map((m) => m[1]!);
      if (names.length !== 1) continue; // a row about several options, or no option
      const name = names[0]!;
      const value = cellValue(row[table.column ?? 1]!);
      if (value === NOT_A_LITERAL) continue;
      const [head, sub] = name.split('.') as [string, string | undefined];
      const nested = table.nested?.[head];
      if (sub !== undefined) {
        compare(name, value, `${nested ?? `${table.type}.${head}`}.${sub}`);
      } else if (nested !== undefined && typeof value === 'object' && value !== null) {
        // An object default: each field against the option's own @default when it names the
        // field, else against the field's @default in its type.
        const whole = literalOf(known.get(`${table.type}.${name}`)?.default ?? '');
        for (const [key, v] of Object.entries(value)) {
          if (typeof whole === 'object' && whole !== null && key in whole) {
            compared++;
            if (!isDeepStrictEqual(v, (whole as Record<string, unknown>)[key])) {
              problems.push(
                `${name}.${key}: the README says ${JSON.stringify(v)}, ${table.type}.${name} @default says ${JSON.stringify((whole as Record<string, unknown>)[key])}`,
              );
            }
          } else {
            compare(`${name}.${key}`, v, `${nested}.${key}`);
          }
        }
      } else {
        compare(name, value, `${table.type}.${name}`);
      }
    }
    expect(problems).toEqual([]);
    expect(compared, 'values compared: the table was found and read').toBeGreaterThan(1);
  });
});

describe('README defaults written `name = value` in a signature agree with the JSDoc @default', () => {
  it("packages/react/README.md: useServerEvents' options", () => {
    const known = fieldsOf('react');
    const text = readFileSync(join(ROOT, 'packages/react/README.md'), 'utf8');
    const start = text.indexOf('- `options`: `headers` (');
    expect(start, 'the options paragraph').toBeGreaterThan(-1);
    const paragraph = text.slice(start, text.indexOf('\n- ', start + 1));
    const problems: string[] = [];
    let compared = 0;
    // `reconnect: { initialDelay = 1000, ... }` names fields of `reconnect`; `maxEventLength =
    // 8388608` a field of the options.
    const scopes = [...paragraph.matchAll(/`(\w+): \{([^}`]*)\}`|`(\w+) = ([^`]+)`/g)];
    for (const [, parent, inner, name, value] of scopes) {
      const pairs =
        parent !== undefined
          ? [...inner!.matchAll(/(\w+) = ([^,]+)/g)].map((m) => [`${parent}.${m[1]}`, m[2]!.trim()])
          : [[name!, value!.trim()]];
      for (const [path, written] of pairs) {
        const field = known.get(`ServerEventsOptions.${path}`);
        if (field?.default === undefined) {
          problems.push(`${path}: no ServerEventsOptions.${path} with a @default`);
          continue;
        }
        compared++;
        if (!isDeepStrictEqual(literalOf(written!), literalOf(field.default))) {
          problems.push(`${path}: the README says ${written}, the JSDoc @default ${field.default}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(compared).toBeGreaterThanOrEqual(4);
  });
});
