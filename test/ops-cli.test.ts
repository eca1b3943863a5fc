// The operator surface as `graphrun serve` offers it: --operator-token (or
// GRAPHRUN_OPERATOR_TOKEN) guards /metrics and /ops/status, the probes stay
// open, and /metrics carries the Node process's metrics (CPU, memory,
// event-loop delay) beside the service's own; the same through the Node
// adapter's createProcessMetrics for a service mounted by hand.
import { describe, expect, it } from 'vitest';
import { CliUsageError, parseCliArgs, USAGE } from '../adapters/node/cli-options.ts';
import { createProcessMetrics } from '../adapters/node/index.ts';
import { cliServers } from './helpers/cli.ts';
import { startHarness } from './helpers/harness.ts';
import { readMetrics } from './helpers/prometheus.ts';

const serve = cliServers('graphrun-ops-cli-', ['GRAPHRUN_TOKEN', 'GRAPHRUN_OPERATOR_TOKEN']);

/** What the Node process's default collectors must give: CPU, memory, heap and the event-loop delay. */
const PROCESS_METRICS = [
  'process_cpu_user_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_heap_size_used_bytes',
  'nodejs_eventloop_lag_p99_seconds',
];

describe('--operator-token', () => {
  const serveOptions = (argv: string[], env: Record<string, string> = {}) => {
    const parsed = parseCliArgs(argv, env);
    if (parsed.command !== 'serve') throw new Error('expected serve');
    return parsed.options;
  };

  it('comes from the flag or GRAPHRUN_OPERATOR_TOKEN, the flag first; unset by default', () => {
    expect(serveOptions(['serve']).operatorToken).toBeUndefined();
    expect(serveOptions(['serve'], { GRAPHRUN_OPERATOR_TOKEN: 'env-op' }).operatorToken).toBe('env-op');
    expect(serveOptions(['serve', '--operator-token', 'flag-op'], { GRAPHRUN_OPERATOR_TOKEN: 'env-op' }).operatorToken).toBe('flag-op');
    expect(serveOptions(['serve'], { GRAPHRUN_OPERATOR_TOKEN: '' }).operatorToken).toBeUndefined();
    expect(USAGE).toContain('--operator-token');
    expect(USAGE).toContain('GRAPHRUN_OPERATOR_TOKEN');
  });

  it('is refused empty, and on the runner (which serves no HTTP)', () => {
    expect(() => parseCliArgs(['serve', '--operator-token', ''])).toThrow(/--operator-token must not be empty/);
    expect(() => parseCliArgs(['runner', '--operator-token', 'x'])).toThrow(CliUsageError);
    expect(() => parseCliArgs(['runner', '--operator-token', 'x'])).toThrow(/--operator-token is for "graphrun serve"/);
  });
});

describe('graphrun serve: the operator surface', () => {
  it('guards /metrics and /ops/status with GRAPHRUN_OPERATOR_TOKEN, leaves the probes open, and reports the process', async () => {
    const cli = await serve([], { GRAPHRUN_OPERATOR_TOKEN: 'op-secret' });
    const url = await cli.url;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as any).status).toBe('ready');
    for (const path of ['/metrics', '/ops/status']) expect((await fetch(`${url}${path}`)).status).toBe(401);
    expect((await fetch(`${url}/ops/status`, { headers: { authorization: 'Bearer op-secret' } })).status).toBe(200);

    const res = await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer op-secret' } });
    expect(res.status).toBe(200);
    const m = readMetrics(await res.text());
    expect(m.value('graphrun_ready')).toBe(1);
    const names = m.families.map((f) => f.name);
    expect(names).toEqual(expect.arrayContaining(PROCESS_METRICS));
    expect(m.value('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    // Every family once: the service's and the process's names never clash.
    expect(new Set(names).size).toBe(names.length);
    expect(await cli.stop()).toBe(0);
  });
});

describe('createProcessMetrics (the Node adapter)', () => {
  it("adds the process's metrics to a service's /metrics, in process and through the Node server", async () => {
    for (const mode of ['in-process', 'node-server'] as const) {
      const h = await startHarness(mode, { metrics: createProcessMetrics() });
      try {
        const res = await h.fetch('/metrics');
        const m = readMetrics(await res.text());
        expect(m.families.map((f) => f.name)).toEqual(expect.arrayContaining([...PROCESS_METRICS, 'graphrun_ready']));
        expect(m.family('nodejs_eventloop_lag_p99_seconds').type).toBe('GAUGE');
      } finally {
        await h.close();
      }
    }
  });
});
