import { describe, expect, test } from 'vitest';
import type { RequestSpec } from '../types';
import { Consumer, Flight } from './flight';

const spec = { key: 'GET https://api.test/a' } as RequestSpec;

function consumerOf(flight: Flight): Consumer {
  return new Consumer(flight, flight.tracker, undefined, undefined, undefined);
}

describe('Flight', () => {
  test('a signal asked for after abort is already aborted with the first reason', () => {
    const flight = new Flight(1, spec, false);
    const first = new Error('first');
    flight.abort(first);
    flight.abort(new Error('second'));
    expect(flight.aborted).toBe(true);
    expect(flight.reason).toBe(first);
    expect(flight.signal.aborted).toBe(true);
    expect(flight.signal.reason).toBe(first);
  });

  test('a signal asked for before abort is aborted by it', () => {
    const flight = new Flight(1, spec, false);
    const signal = flight.signal;
    expect(signal.aborted).toBe(false);
    expect(flight.signal).toBe(signal);
    const reason = new Error('gone');
    flight.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
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
