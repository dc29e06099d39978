import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { RequestSpec } from '../request/resolve';
import { Consumer, Flight } from './flight';

const spec = { key: 'GET https://api.test/a' } as RequestSpec;

function consumerOf(flight: Flight): Consumer {
  return new Consumer(flight, Number.NaN, false, undefined);
}

describe('Flight', () => {
  test('abort keeps the first reason and tells the attempt or wait in progress once', () => {
    const flight = new Flight(1, spec);
    const told: unknown[] = [];
    flight.onAbort = (reason) => told.push(reason);
    const first = new Error('first');
    flight.abort(first);
    flight.abort(new Error('second'));
    expect(flight.aborted).toBe(true);
    expect(flight.reason).toBe(first);
    expect(told).toEqual([first]);
  });

  test('consumers: one, then many, removable once, taken once, each settled as it goes', () => {
    const flight = new Flight(1, spec);
    const [a, b, c] = [consumerOf(flight), consumerOf(flight), consumerOf(flight)];
    flight.addConsumer(a);
    expect(flight.consumerCount).toBe(1);
    expect(flight.consumers()).toEqual([a]);
    flight.addConsumer(b);
    flight.addConsumer(c);
    expect(flight.consumerCount).toBe(3);
    flight.deleteConsumer(b);
    expect(b.settled).toBe(true);
    flight.deleteConsumer(b);
    expect(flight.consumerCount).toBe(2);
    expect(flight.consumers()).toEqual([a, c]);
    expect([...flight.takeConsumers()]).toEqual([a, c]);
    expect([a.settled, c.settled]).toEqual([true, true]);
    expect(flight.consumerCount).toBe(0);
    expect([...flight.takeConsumers()]).toEqual([]);
  });

  test('the lone consumer leaves', () => {
    const flight = new Flight(1, spec);
    const a = consumerOf(flight);
    flight.addConsumer(a);
    flight.deleteConsumer(a);
    flight.deleteConsumer(a);
    expect(flight.consumerCount).toBe(0);
    expect(flight.consumers()).toEqual([]);
  });

  test('consumers in joining order under any mix of joins, leaves and snapshots (model: a Set)', () => {
    const op = fc.oneof(
      { arbitrary: fc.constant({ kind: 'join' as const }), weight: 10 },
      { arbitrary: fc.nat().map((n) => ({ kind: 'leave' as const, n })), weight: 8 },
      { arbitrary: fc.constant({ kind: 'snapshot' as const }), weight: 2 },
      { arbitrary: fc.constant({ kind: 'take' as const }), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const flight = new Flight(1, spec);
        const model = new Set<Consumer>();
        const made: Consumer[] = [];
        // By identity: consumers of one flight are structurally equal, so toEqual cannot tell them apart.
        const ids = (list: Iterable<Consumer>) => [...list].map((c) => made.indexOf(c));
        for (const o of ops) {
          if (o.kind === 'join') {
            const c = consumerOf(flight);
            made.push(c);
            flight.addConsumer(c);
            model.add(c);
          } else if (o.kind === 'leave' && made.length > 0) {
            // Mostly a live consumer; every fourth pick may be one that already left (a no-op).
            const live = [...model];
            const c =
              o.n % 4 === 0 || live.length === 0
                ? made[o.n % made.length]!
                : live[o.n % live.length]!;
            flight.deleteConsumer(c);
            model.delete(c);
          } else if (o.kind === 'snapshot') {
            expect(ids(flight.consumers())).toEqual(ids(model));
          } else if (o.kind === 'take') {
            expect(ids(flight.takeConsumers())).toEqual(ids(model));
            model.clear();
          }
          expect(flight.consumerCount).toBe(model.size);
        }
        expect(ids(flight.consumers())).toEqual(ids(model));
        expect(ids(flight.takeConsumers())).toEqual(ids(model));
        expect(flight.consumerCount).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
