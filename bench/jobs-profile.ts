// Profiling aid for bench/jobs.ts part 3 (not a benchmark): starts
// bench/jobs-server.ts with --cpu-prof and hammers only the graphrun server,
// so the profile holds no bare-server samples.
//   npx tsx bench/jobs-profile.ts [profile dir, default /tmp/graphrun-prof] [seconds, default 5]
import { fork } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import type { ServerMessage } from './jobs-server.ts';

const profDir = process.argv[2] ?? '/tmp/graphrun-prof';
const seconds = Number(process.argv[3] ?? 5);
const CONNECTIONS = 32;

await mkdir(profDir, { recursive: true });
const dir = await mkdtemp(join(tmpdir(), 'graphrun-bench-prof-'));
const script = fileURLToPath(new URL('./jobs-server.ts', import.meta.url));
// PROFILER=perf: Linux perf instead of V8's profiler (native frames too): perf report -i <dir>/perf.data;
// PROFILER=strace: system calls counted in <dir>/strace.txt (STRACE_ARGS to change how);
// PROFILER=node-flags: the server runs with NODE_FLAGS (e.g. --trace-deopt) and no profiler.
const perf = process.env.PROFILER === 'perf';
const tsx = ['--import', import.meta.resolve('tsx')];
const child = fork(script, [dir], {
  ...(perf
    ? { execPath: 'perf', execArgv: ['record', '-F', '1999', '-g', '-o', join(profDir, 'perf.data'), process.execPath, '--perf-basic-prof', ...tsx] }
    : process.env.PROFILER === 'strace'
      ? {
          execPath: 'strace',
          execArgv: [...(process.env.STRACE_ARGS ?? '-f -c').split(' '), '-o', join(profDir, 'strace.txt'), process.execPath, ...tsx],
        }
      : process.env.PROFILER === 'node-flags'
        ? { execArgv: [...(process.env.NODE_FLAGS ?? '').split(' ').filter(Boolean), ...tsx] }
        : { execArgv: ['--cpu-prof', `--cpu-prof-dir=${profDir}`, ...tsx] }),
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const ready = await new Promise<ServerMessage>((resolve) => child.once('message', (m) => resolve(m as ServerMessage)));
if (ready.type !== 'ready') throw new Error(`server: ${JSON.stringify(ready)}`);
// PROFILE_TARGET=bare: the bare server of the same process instead, to compare where its time goes.
const pool = new Pool(process.env.PROFILE_TARGET === 'bare' ? ready.bareUrl : ready.url, { connections: CONNECTIONS, pipelining: 1 });
let done = 0;
const end = performance.now() + seconds * 1000;
await Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < end) {
      const res = await pool.request({ path: ready.path, method: 'GET' });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`answered ${res.statusCode}`);
      done++;
    }
  }),
);
console.log(`${(done / seconds).toFixed(0)} req/s; profile in ${profDir}`);
await pool.close();
const exited = new Promise((resolve) => child.once('exit', resolve));
child.send({ type: 'stop' });
await exited;
await rm(dir, { recursive: true, force: true });
