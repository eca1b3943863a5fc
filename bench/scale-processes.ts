// The processes bench/scale.ts starts, and their end: runner processes
// (bench/scale-runner.ts) forked with an IPC channel, every wait on them
// bounded; and one list of closers, run last-first once, whether the bench
// ends, fails or is interrupted.
import { type ChildProcess, fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { FromRunner, ScaleStorage } from './scale-setup.ts';

const closers: Array<() => Promise<void>> = [];
let closing: Promise<void> | undefined;

/** Runs at cleanup, after everything registered later. */
export function onCleanup(close: () => Promise<void>): void {
  closers.push(close);
}

/** Closes everything registered, last first; a closer that fails does not stop the others. */
export function cleanup(): Promise<void> {
  closing ??= (async () => {
    while (closers.length > 0) {
      const close = closers.pop()!;
      await close().catch((err: unknown) => console.error(`cleanup: ${err instanceof Error ? err.message : String(err)}`));
    }
  })();
  return closing;
}

export interface Runner {
  pid: number;
  /** Throws if the process ended without being told to stop. */
  check(): void;
  /** Closes its service and waits for the exit; killed after a bound. */
  stop(): Promise<void>;
}

function waitFor<T extends FromRunner['type']>(child: ChildProcess, type: T, boundMs: number): Promise<Extract<FromRunner, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`runner ${child.pid}: no ${type} within ${boundMs} ms`)), boundMs);
    const onMessage = (m: FromRunner) => {
      if (m.type === type) done(undefined, m as Extract<FromRunner, { type: T }>);
      else if (m.type === 'error') done(new Error(`runner ${child.pid}: ${m.message}`));
    };
    const onExit = (code: number | null) => done(new Error(`runner ${child.pid} exited (${code}) before ${type}`));
    function done(err?: Error, m?: Extract<FromRunner, { type: T }>) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(m!);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** A runner process on the case's storage, running jobs once this resolves. */
export async function startRunner(storage: ScaleStorage, boundMs = 90_000): Promise<Runner> {
  const script = fileURLToPath(new URL('./scale-runner.ts', import.meta.url));
  const child = fork(script, [JSON.stringify(storage)], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let stopped: Promise<void> | undefined;
  let died: string | undefined;
  child.once('exit', (code, signal) => {
    if (!stopped) died = `runner ${child.pid} exited (${signal ?? code}) while the bench ran`;
  });
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null && child.connected) child.send({ type: 'stop' });
      const bound = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(bound);
    })());
  onCleanup(stop);
  await waitFor(child, 'ready', boundMs);
  return {
    pid: child.pid!,
    check() {
      if (died) throw new Error(died);
    },
    stop,
  };
}

/** Busy and total CPU time of the machine so far, all cores, milliseconds. */
export function machineCpu(): { busy: number; total: number; cores: number } {
  let busy = 0;
  let total = 0;
  const all = cpus();
  for (const { times } of all) {
    const sum = times.user + times.nice + times.sys + times.irq + times.idle;
    total += sum;
    busy += sum - times.idle;
  }
  return { busy, total, cores: all.length };
}

/** Milliseconds per clock tick of /proc's times (USER_HZ: 100 on every Linux we run on). */
const TICK_MS = 10;

/**
 * CPU time so far (ms, every thread, and the reaped children's: PostgreSQL's
 * ended backends) of each child of this process with everything under it,
 * by the child's pid and name; from /proc, so empty where there is none.
 */
export function childrenCpu(): Map<number, { name: string; ms: number }> {
  const stats = new Map<number, { name: string; ppid: number; ms: number }>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return new Map();
  }
  for (const pid of pids) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      continue; // it ended meanwhile
    }
    // pid (name) state ppid ... utime stime cutime cstime (fields 14-17); the name may hold spaces and parentheses.
    const close = text.lastIndexOf(')');
    const fields = text.slice(close + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    stats.set(Number(pid), { name: text.slice(text.indexOf('(') + 1, close), ppid: Number(fields[1]), ms: ticks * TICK_MS });
  }
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const subtree = (pid: number): number => (stats.get(pid)?.ms ?? 0) + (children.get(pid) ?? []).reduce((sum, c) => sum + subtree(c), 0);
  const out = new Map<number, { name: string; ms: number }>();
  for (const pid of children.get(process.pid) ?? []) out.set(pid, { name: stats.get(pid)!.name, ms: subtree(pid) });
  return out;
}
