// Group commit on the one SQLite connection (storage/sql/group-commit.ts,
// through FifoSqliteDialect over better-sqlite3): writes queued behind each
// other share a commit, a caller's rollback undoes only its own writes, a
// caller that wrote is answered only once its write is committed (another
// connection sees it), and a commit that fails fails every caller of its group
// and leaves none of their writes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FifoSqliteDialect } from '../storage/sql/sqlite-dialect.ts';

interface Db {
  t: { id: number; v: string };
}

const dir = mkdtempSync(join(tmpdir(), 'graphrun-group-commit-'));
let n = 0;
let opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of opened.reverse()) await o.close();
  opened = [];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A database file, the dialect over a driver whose `commit` statements are counted (and failed once when asked). */
async function open() {
  const file = join(dir, `g${n++}.db`);
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  const seen = { commits: 0, failNext: false };
  const driver = new Proxy(raw, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (sql: string) => {
          if (/^\s*commit\b/i.test(sql)) {
            seen.commits++;
            if (seen.failNext) {
              seen.failNext = false;
              return {
                run: () => {
                  throw new Error('disk I/O error');
                },
              };
            }
          }
          return target.prepare(sql);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const db = new Kysely<Db>({ dialect: new FifoSqliteDialect({ database: driver as unknown as BetterSqlite3.Database }) });
  opened.push({ close: () => db.destroy() });
  await db.schema
    .createTable('t')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('v', 'text')
    .execute();
  // Another connection to the file: it sees only what is committed.
  const other = new BetterSqlite3(file, { readonly: true });
  opened.push(other);
  const committed = (id: number) => other.prepare('select v from t where id = ?').get(id) as { v: string } | undefined;
  return { db, seen, committed };
}

describe('SQLite group commit', () => {
  it('writes queued behind each other share commits, and each caller is answered once its write is committed', async () => {
    const { db, seen, committed } = await open();
    const before = seen.commits;
    const notSeen: number[] = [];
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        await db
          .insertInto('t')
          .values({ id: i, v: `v${i}` })
          .execute();
        if (committed(i)?.v !== `v${i}`) notSeen.push(i);
      }),
    );
    expect(notSeen).toEqual([]);
    // 100 writes, fewer commits: they were grouped (at most 64 callers share one).
    const commits = seen.commits - before;
    expect(commits).toBeGreaterThanOrEqual(2);
    expect(commits).toBeLessThan(100);
  });

  it("a caller's rollback undoes only its own writes; the others of its group are kept", async () => {
    const { db, committed } = await open();
    const outcomes = await Promise.allSettled(
      [1, 2, 3, 4].map((id) =>
        db.transaction().execute(async (tx) => {
          await tx
            .insertInto('t')
            .values({ id, v: `a${id}` })
            .execute();
          await tx
            .insertInto('t')
            .values({ id: id + 100, v: `b${id}` })
            .execute();
          if (id === 2) throw new Error('changed my mind');
        }),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect([1, 2, 3, 4].map((id) => [committed(id)?.v ?? null, committed(id + 100)?.v ?? null])).toEqual([
      ['a1', 'b1'],
      [null, null],
      ['a3', 'b3'],
      ['a4', 'b4'],
    ]);
    // A failed statement (a duplicate key) inside a transaction is that caller's alone too.
    const again = await Promise.allSettled([
      db.insertInto('t').values({ id: 50, v: 'x' }).execute(),
      db.transaction().execute((tx) => tx.insertInto('t').values({ id: 1, v: 'dup' }).execute()),
      db.insertInto('t').values({ id: 51, v: 'y' }).execute(),
    ]);
    expect(again.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect([committed(50)?.v, committed(1)?.v, committed(51)?.v]).toEqual(['x', 'a1', 'y']);
  });

  it('a commit that fails fails every caller of its group and keeps none of their writes; the next group commits', async () => {
    const { db, seen, committed } = await open();
    seen.failNext = true;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        db
          .insertInto('t')
          .values({ id: i, v: `v${i}` })
          .execute(),
      ),
    );
    // The first write may have gone alone (nobody waited yet when it started): only the failed group's callers fail.
    const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []));
    expect(failed.length).toBeGreaterThan(0);
    for (const i of failed) {
      expect((outcomes[i] as PromiseRejectedResult).reason.message).toMatch(/disk I\/O error/);
      expect(committed(i)).toBeUndefined();
    }
    for (const [i, o] of outcomes.entries()) if (o.status === 'fulfilled') expect(committed(i)?.v).toBe(`v${i}`);
    await db.insertInto('t').values({ id: 99, v: 'after' }).execute();
    expect(committed(99)?.v).toBe('after');
  });
});
