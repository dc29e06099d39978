import { it } from 'vitest';
import { createBaseClient, createClient, withAdaptive, withScheduler, withIntelligence, withCircuitBreaker } from '../src/index';
import { jsonResponse, settle, quickResponse } from './helpers';

it('feature combos', async () => {
  const f = async () => quickResponse(429, {});
  const tries: [string, () => unknown][] = [
    ['adaptive disabled', () => createBaseClient({ fetch: f, features: [withAdaptive({ enabled: false })] }).adaptive().snapshot()],
    ['adaptive no sched', async () => { const c = createBaseClient({ fetch: f, retry: { attempts: 1 }, features: [withAdaptive({ concurrency: true, rateLimit: true, outcomeWindow: 2 })] }); for (let i = 0; i < 4; i++) await settle(c.get('https://a.test/x')); return [c.adaptive().endpoint('GET', 'https://a.test/x'), c.intelligence().snapshot().summary.adaptive]; }],
    ['sched disabled + adaptive', async () => { const c = createClient({ fetch: f, retry: { attempts: 1 }, scheduler: { enabled: false }, adaptive: { enabled: true, concurrency: true, outcomeWindow: 2 } }); for (let i = 0; i < 4; i++) await settle(c.get('https://a.test/x')); return c.adaptive().endpoint('GET', 'https://a.test/x'); }],
    ['intel disabled + circuit', () => { const c = createClient({ fetch: f, intelligence: { enabled: false } }); return c.intelligence().endpoint('GET', '/x'); }],
    ['base sched prioritize', () => createBaseClient({ fetch: f, features: [withScheduler({ enabled: false, priority: true })] }).scheduler().prioritize('g', 'high')],
    ['base sched prioritize bad', () => createBaseClient({ fetch: f, features: [withScheduler({ enabled: false, priority: true })] }).scheduler().prioritize('g', 'urgent' as never)],
    ['circuit disabled status', () => createClient({ fetch: f, circuitBreaker: { enabled: false } }).circuitBreaker().status('GET', '/x?y=1')],
    ['circuit disabled status relative no base', () => createBaseClient({ fetch: f }).circuitBreaker().status('GET', 'relative')],
    ['circuit enabled status relative no base', () => createClient({ fetch: f }).circuitBreaker().status('GET', 'relative')],
    ['circuit statuses disabled', () => createClient({ fetch: f, circuitBreaker: { enabled: false } }).circuitBreaker().statuses()],
    ['adaptive endpoint bad method base', () => createBaseClient({ fetch: f }).adaptive().endpoint('FOO', '/x')],
    ['adaptive endpoint bad method enabled', () => createClient({ fetch: f, adaptive: { enabled: true } }).adaptive().endpoint('FOO', '/x')],
    ['intel reset arg', () => createBaseClient({ fetch: f }).intelligence().reset()],
  ];
  for (const [name, fn] of tries) {
    try { console.log('OK', name, JSON.stringify(await fn())); } catch (e) { console.log('THROW', name, String(e)); }
  }
});
