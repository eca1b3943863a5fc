// One job-running process per SQLite database: a second runner on the same
// file refuses to start with a message that says why and what to do; an
// API-only instance (runJobs: false) may share the file; the place frees when
// the runner closes, and when its process dies, however it dies.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createService, RunnerLockError, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { type CliProcess, spawnCli } from './helpers/cli.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-runner-lock-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const open = (filename: string) => createSqliteStorage({ filename, blobs: createMemoryBlobStore() });
const start = async (filename: string, runJobs = true) =>
  createService({ storage: await open(filename), runJobs, logger: silentLogger, sweepIntervalMs: 0 });

describe('one job runner per SQLite database', () => {
  it('a second runner on the same file is refused; an API-only instance is not; closing frees the place', async () => {
    const filename = join(dir, 'one.db');
    const first = await start(filename);
    const second = await open(filename);
    const refused = createService({ storage: second, logger: silentLogger, sweepIntervalMs: 0 });
    await expect(refused).rejects.toThrow(RunnerLockError);
    await expect(refused).rejects.toThrow(/Another process runs jobs on the SQLite database .*one\.db.*runJobs: false/);
    await second.close();

    const apiOnly = await start(filename, false);
    const res = await apiOnly.fetch(new Request('http://x/api/v2/openapi.json'));
    expect(res.status).toBe(200);
    await apiOnly.close();

    await first.close();
    const next = await start(filename);
    await next.close();
  });

  it('another database in the same directory has its own runner', async () => {
    const a = await start(join(dir, 'a.db'));
    const b = await start(join(dir, 'b.db'));
    await Promise.all([a.close(), b.close()]);
  });

  it('an in-memory database is never locked', async () => {
    const a = await start(':memory:');
    const b = await start(':memory:');
    await Promise.all([a.close(), b.close()]);
  });
});

describe('across processes (the CLI)', () => {
  const started: CliProcess[] = [];
  const cli = (data: string) => {
    const p = spawnCli(['serve', '--port', '0', '--data', data]);
    started.push(p);
    return p;
  };
  afterEach(() => {
    for (const p of started.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  });

  it('a second graphrun on the same --data exits 1 saying why; once the first is killed, a new one starts', async () => {
    const data = join(dir, 'cli');
    const first = cli(data);
    await first.url;
    const second = cli(data);
    expect(await second.exited).toBe(1);
    expect(second.output().stderr).toMatch(/could not start: Another process runs jobs on the SQLite database/);

    // SIGKILL: no shutdown runs, only the operating system lets go of the lock.
    first.child.kill('SIGKILL');
    await first.exited;
    const third = cli(data);
    const url = await third.url;
    expect((await fetch(`${url}/api/v2/openapi.json`)).status).toBe(200);
  });
});
