import { expectTypeOf, test } from 'vitest';
import { EventEmitter } from '../src/index';

test('emit leaves the payload out only for events whose payload admits undefined', () => {
  const e = new EventEmitter<{ ping: undefined; done: void; data: { n: number } }>();
  e.emit('ping');
  e.emit('done');
  e.emit('data', { n: 1 });
  // @ts-expect-error: `data` needs its payload
  e.emit('data');
  expectTypeOf(e.emit).toBeFunction();
});
