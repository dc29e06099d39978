import { describe, expect, it } from 'vitest';
import { ENDPOINT_COUNTERS, EndpointRecord, foldCounters } from './endpoint-record';

describe('EndpointRecord', () => {
  it('ENDPOINT_COUNTERS names every counter field (a new one cannot be left out of the totals)', () => {
    const record = new EndpointRecord('GET /x', 'GET', '/x');
    const numeric = Object.keys(record).filter(
      (k) => typeof (record as unknown as Record<string, unknown>)[k] === 'number',
    );
    expect([...ENDPOINT_COUNTERS].sort()).toEqual(numeric.sort());
  });

  it('foldCounters adds every counter and the derived figures follow', () => {
    const a = new EndpointRecord('GET /a', 'GET', '/a');
    const b = new EndpointRecord('GET /b', 'GET', '/b');
    ENDPOINT_COUNTERS.forEach((key, i) => {
      a[key] = i + 1;
      b[key] = 10 * (i + 1);
    });
    b.refusedAfterStart = 0;
    const requests = a.requests + b.requests;
    foldCounters(a, b);
    ENDPOINT_COUNTERS.forEach((key, i) => {
      expect(a[key], key).toBe(key === 'refusedAfterStart' ? i + 1 : 11 * (i + 1));
    });
    expect(a.requests).toBe(requests);
    b.latency.record(5);
    expect(a.latency.size).toBe(0);
  });
});
