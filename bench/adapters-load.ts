// The load generator of bench/adapters.ts and bench/jobs.ts: one undici Pool
// per server, the same number of connections and loops for every target, each
// loop a GET whose body is read to the end before the next. The server's CPU
// time comes from the caller: /proc for a process of any runtime (cpuSeconds),
// or what a Node server reports of itself.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

export const CONNECTIONS = 32;

let ticksPerSecond: number | undefined;

/** User + system CPU seconds the process has used so far (all its threads); NaN where /proc is missing. */
export function cpuSeconds(pid: number): number {
  try {
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

export interface Window {
  rps: number;
  errors: number;
  /** Server CPU share over the window: 1 = one core busy all the time. */
  serverCpu: number;
}

/** The server's CPU seconds so far. */
export type CpuClock = () => number | Promise<number>;

/** GETs `path` from CONNECTIONS loops for `ms`; requests/s and the server's CPU share. */
export async function hammer(pool: Pool, path: string, ms: number, cpu: CpuClock, headers?: Record<string, string>): Promise<Window> {
  let done = 0;
  let errors = 0;
  const cpuBefore = await cpu();
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const res = await pool.request({ path, method: 'GET', headers });
        await res.body.dump();
        if (res.statusCode === 200) done++;
        else errors++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  return { rps: done / elapsed, errors, serverCpu: ((await cpu()) - cpuBefore) / elapsed };
}

/**
 * The adapter and its bare baseline, in the order A B B A after a warm-up of
 * each; the better window of each counts (the machine is shared and noisy).
 */
export async function compare(
  urls: { adapter: string; bare: string },
  path: string,
  cpu: CpuClock,
  timing: { warmupMs: number; windowMs: number },
  /** Sent with every request (e.g. an API key), to both servers alike. */
  headers?: Record<string, string>,
): Promise<{ adapter: Window; bare: Window }> {
  const pools = {
    adapter: new Pool(urls.adapter, { connections: CONNECTIONS, pipelining: 1 }),
    bare: new Pool(urls.bare, { connections: CONNECTIONS, pipelining: 1 }),
  };
  type Name = keyof typeof pools;
  const best: Record<Name, Window> = { adapter: { rps: 0, errors: 0, serverCpu: 0 }, bare: { rps: 0, errors: 0, serverCpu: 0 } };
  try {
    for (const name of ['bare', 'adapter'] as Name[]) await hammer(pools[name], path, timing.warmupMs, cpu, headers);
    for (const name of ['adapter', 'bare', 'bare', 'adapter'] as Name[]) {
      const w = await hammer(pools[name], path, timing.windowMs, cpu, headers);
      if (w.errors > 0) throw new Error(`${name}: ${w.errors} requests did not answer 200`);
      if (w.rps > best[name].rps) best[name] = w;
    }
    return best;
  } finally {
    await Promise.all(Object.values(pools).map((p) => p.close()));
  }
}
