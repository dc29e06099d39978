import { describe, expect, test } from 'vitest';
import type { RequestSpec } from '../request/resolve';
import { Consumer, Flight } from './flight';

const spec = { key: 'GET https://api.test/a' } as RequestSpec;

function consumerOf(flight: Flight): Consumer {
  return new Consumer(flight, flight.tracker, undefined, undefined, undefined);
}

describe('Flight', () => {
  test('abort keeps the first reason and tells the attempt or wait in progress once', () => {
    const flight = new Flight(1, spec, false);
    const told: unknown[] = [];
    flight.onAbort = (reason) => told.push(reason);
    const first = new Error('first');
    flight.abort(first);
    flight.abort(new Error('second'));
    expect(flight.aborted).toBe(true);
    expect(flight.reason).toBe(first);
    expect(told).toEqual([first]);
  });

  test('consumers: one, then many, each counted once, removable, taken once', () => {
    const flight = new Flight(1, spec, false);
    const [a, b, c] = [consumerOf(flight), consumerOf(flight), consumerOf(flight)];
    flight.addConsumer(a);
    flight.addConsumer(a);
    expect(flight.consumerCount).toBe(1);
    expect(flight.consumers()).toEqual([a]);
    flight.addConsumer(b);
    flight.addConsumer(c);
    flight.addConsumer(b);
    expect(flight.consumerCount).toBe(3);
    flight.deleteConsumer(b);
    expect(flight.consumers()).toEqual([a, c]);
    expect([...flight.takeConsumers()]).toEqual([a, c]);
    expect(flight.consumerCount).toBe(0);
    expect([...flight.takeConsumers()]).toEqual([]);
  });

  test('the lone consumer leaves', () => {
    const flight = new Flight(1, spec, false);
    const a = consumerOf(flight);
    flight.addConsumer(a);
    flight.deleteConsumer(consumerOf(flight));
    expect(flight.consumerCount).toBe(1);
    flight.deleteConsumer(a);
    expect(flight.consumerCount).toBe(0);
    expect(flight.consumers()).toEqual([]);
  });
});
