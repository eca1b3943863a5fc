// The SQLite store's commit mark (FifoSqliteDialect.commitMark, behind
// MetadataStore.commitMark): it stays put while nothing is committed and
// moves with any commit, of this connection, of another one in this process,
// or of another process; and it is not given while a transaction may be open
// on the connection. A kept job view trusts it in place of a read of its stamp.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type SqliteDatabase } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { FifoSqliteDialect } from '../storage/sql/sqlite-dialect.ts';

interface Db {
  t: { id: number; v: string };
}

let dir: string;
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await rm(dir, { recursive: true, force: true });
});

/** `database` over a WAL file in a new directory, as the SQLite storage opens it. */
async function open(wrap: (raw: BetterSqlite3.Database) => SqliteDatabase = (raw) => raw) {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-mark-'));
  const file = join(dir, 'mark.db');
  const raw = new BetterSqlite3(file);
  raw.exec('PRAGMA journal_mode = WAL');
  const dialect = new FifoSqliteDialect({ database: wrap(raw) });
  const db = new Kysely<Db>({ dialect });
  closers.push(() => db.destroy());
  await db.schema
    .createTable('t')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('v', 'text')
    .execute();
  /** Another connection to the same file. */
  const other = () => {
    const conn = new BetterSqlite3(file);
    closers.push(() => conn.close());
    return conn;
  };
  return { file, dialect, db, other, mark: () => dialect.commitMark() };
}

/** A driver with only what kysely's SqliteDatabase asks (no pluck, no get), as a wrapper of another runtime's driver would be. */
const plain = (raw: BetterSqlite3.Database): SqliteDatabase => ({
  close: () => raw.close(),
  prepare(sql) {
    const s = raw.prepare(sql);
    return { reader: s.reader, all: (p) => s.all(p as unknown[]), run: (p) => s.run(p as unknown[]), iterate: (p) => s.iterate(p as unknown[]) };
  },
});

describe.each([
  ['better-sqlite3', undefined],
  ['a driver without pluck', plain],
] as const)('the SQLite commit mark (%s)', (_name, wrap) => {
  it('stays put while nothing is committed, and moves with every commit of this connection', async () => {
    const { db, mark } = await open(wrap);
    const m0 = mark();
    expect(m0).toEqual(expect.any(String));
    await db.selectFrom('t').selectAll().execute();
    expect(mark()).toBe(m0);
    await db.insertInto('t').values({ id: 1, v: 'a' }).execute();
    const m1 = mark();
    expect(m1).not.toBe(m0);
    expect(mark()).toBe(m1);
    await db.updateTable('t').set({ v: 'b' }).where('id', '=', 1).execute();
    const m2 = mark();
    expect([m0, m1]).not.toContain(m2);
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('t').where('id', '=', 1).execute();
    });
    expect([m0, m1, m2]).not.toContain(mark());
  });

  it('moves when another connection of this process commits, not when it only reads', async () => {
    const { mark, other } = await open(wrap);
    const conn = other();
    const m0 = mark();
    conn.prepare('SELECT * FROM t').all();
    expect(mark()).toBe(m0);
    conn.prepare('INSERT INTO t (id, v) VALUES (?, ?)').run(7, 'other');
    const m1 = mark();
    expect(m1).not.toBe(m0);
    expect(mark()).toBe(m1);
  });

  it('moves when another process commits', async () => {
    const { file, mark } = await open(wrap);
    const m0 = mark();
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const script = `const D = require(${JSON.stringify(driver)}); const db = new D(process.argv[1]); db.prepare('INSERT INTO t (id, v) VALUES (42, ?)').run('child'); db.close();`;
    execFileSync(process.execPath, ['-e', script, file]);
    expect(mark()).not.toBe(m0);
  });

  it('is not given while the connection is taken, since a transaction may be open on it', async () => {
    const { db, dialect } = await open(wrap);
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 2, v: 'in tx' }).execute();
      expect(dialect.commitMark()).toBeUndefined();
    });
    expect(dialect.commitMark()).toEqual(expect.any(String));
  });
});
