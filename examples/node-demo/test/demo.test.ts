// Smoke test: runs the demo as a user would (a child process, the repository's tsconfig mapping
// @keel/core to its sources) and checks that it exits 0 and tells every section's story. The demo
// already fails itself (exit 1) when keel breaks a claim; this pins the lines a reader relies on.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runDemo(): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/node-demo/main.ts'], {
      cwd: repo,
      env: { ...process.env, TSX_TSCONFIG_PATH: `${repo}tsconfig.json` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The text of one numbered section, from its heading to the next blank line before a heading. */
function section(out: string, title: string): string {
  const start = out.search(new RegExp(`^\\d+\\. ${title}$`, 'm'));
  expect(start, `section "${title}" is printed`).toBeGreaterThanOrEqual(0);
  const rest = out.slice(start);
  const end = rest.search(/\n\n(\d+\. |Summary|Intelligence)/);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The value cell of a row of the summary table, e.g. `| cache hits | 3 |`. */
function summary(out: string, label: string): number {
  const row = new RegExp(`^\\| ${label} +\\| +(\\d+) \\|`, 'm').exec(out);
  expect(row, `summary row "${label}"`).not.toBeNull();
  return Number(row?.[1]);
}

describe('node-demo', () => {
  let run: Run;
  beforeAll(async () => {
    run = await runDemo();
  });

  it('exits by itself with code 0 and no failed expectation', () => {
    expect(run.stderr).not.toContain('demo expectation failed');
    expect(run.code, run.stderr).toBe(0);
  });

  it('serves the second read from the cache', () => {
    const out = section(run.stdout, 'Cache');
    expect(out).toContain('GET /users -> 200, 3 users (server still at 1)');
    expect(out).toContain('cache-hit events so far: 1');
  });

  it('sends one request for 50 identical reads', () => {
    expect(section(run.stdout, 'De-duplication')).toContain(
      '50 x GET /users/2 -> Linus; server saw 1 request, 49 callers joined it',
    );
  });

  it('recovers a 503 and two 429s by retrying', () => {
    const out = section(run.stdout, 'Retries');
    expect(out).toContain('· recovered  GET /flaky: 200 on attempt 2');
    expect(out).toContain('· recovered  GET /limited: 200 on attempt 3');
    expect(summary(run.stdout, 'requests recovered by retrying')).toBe(2);
  });

  it('cuts slow attempts off with a TimeoutError', () => {
    const out = section(run.stdout, 'Timeouts');
    expect(out).toMatch(/GET \/slow\?ms=1500 -> TimeoutError: timed out \(250 ms\)/);
    expect(out).toContain('the server saw both timed-out attempts close early');
    expect(summary(run.stdout, 'attempts timed out')).toBe(2);
  });

  it('cancels a caller and keeps a shared flight for the other', () => {
    const out = section(run.stdout, 'Cancellation');
    expect(out).toMatch(/GET \/slow\?ms=2000 cancelled -> CancelledError/);
    expect(out).toContain('one aborts its signal -> it rejects, the other gets 200');
  });

  it('refetches an invalidated key', () => {
    expect(section(run.stdout, 'Invalidation after a mutation')).toContain(
      'subscriber saw: invalidate -> revalidate',
    );
  });

  it('opens the circuit, refuses without requests, probes once and closes', () => {
    const out = section(run.stdout, 'Circuit breaker');
    expect(out).toContain('GET /inventory: OPEN after 3 failures in a row');
    expect(out).toMatch(
      /20 x GET \/inventory while open -> 20 x CircuitOpenError, all in [\d.]+ ms; the server's count stays at 4/,
    );
    expect(out).toContain(
      'GET /inventory: HALF-OPEN, reset timeout over; this request is the probe',
    );
    expect(out).toContain('GET /inventory: CLOSED, the probe succeeded');
    expect(out).toContain(
      '3 callers race after the reset timeout -> 200, CircuitOpenError, CircuitOpenError; the server saw 1 request, circuit closed',
    );
    expect(summary(run.stdout, 'circuits opened')).toBe(1);
    expect(summary(run.stdout, 'calls refused by an open circuit')).toBe(22);
    expect(summary(run.stdout, 'circuits closed by a probe')).toBe(1);
  });

  it('drains a 200-request burst by lanes under the rate limit', () => {
    const out = section(run.stdout, 'Scheduler: a burst under a rate limit');
    expect(out).toMatch(/issued: +queued 196 \(high 39, normal 79, low 78\), active 4/);
    expect(out).toMatch(/draining: +queued +\d+/);
    expect(out).toMatch(
      /drained: +queued +0 \(high +0, normal +0, low +0\), active 0, delayed 0, completed 200/,
    );
    expect(out).toContain('served order after the first 4: HHHHNNL HHHHNNL');
    expect(out).toMatch(/most attempts started in any 250 ms: (\d+) \(limit 40\)/);
  });

  it('lowers the ceiling of a saturating endpoint and explains why', () => {
    const out = section(run.stdout, 'Adaptive concurrency: a saturating backend');
    expect(out).toMatch(
      /· adaptive +ceiling 8 -> 7: p95 \d+ ms >= highLatencyMs 80 for \d+ windows/,
    );
    const trace = /ceiling trace: ([\d >-]+)/.exec(out)?.[1]?.split(' -> ').map(Number) ?? [];
    expect(trace[0]).toBe(8);
    expect(trace.at(-1)).toBeLessThan(8);
    expect(out).toMatch(/configured 8, effective [1-7],/);
    expect(out).toMatch(/reason: +p95 \d+ ms/);
    expect(out).toMatch(/counters: \d+ decisions, [1-9]\d* reductions/);
  });

  it('ends with the intelligence table of every client', () => {
    const table = run.stdout.slice(run.stdout.indexOf('\nIntelligence ('));
    expect(table).toMatch(
      /\| main +\| GET \/inventory +\| +28 \| +3 \| +3 \|.*\| +22 \|.*\| closed +\|/,
    );
    expect(table).toMatch(/\| scheduler +\| GET \/work +\| +200 \| +200 \| +0 \|/);
    expect(table).toMatch(/\| adaptive +\| GET \/saturating +\| +\d+ \|/);
  });
});
