// FifoSqliteDialect (storage/sql/sqlite-dialect.ts): the one connection in
// turn, first come first served, transactions and streams included.
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Executor } from '../storage/sql/query-template.ts';
import { FifoSqliteDialect } from '../storage/sql/sqlite-dialect.ts';

interface Db {
  t: { id: number; v: string };
}

let db: Kysely<Db>;
let dialect: FifoSqliteDialect;
afterEach(() => db?.destroy());

/**
 * `plain`: the driver hides `inTransaction`, as node:sqlite's adapter does: no group commit, kysely's
 * own begin and commit. `failCommit.next`: the next COMMIT statement fails (disk I/O error).
 */
async function open(opts: { plain?: boolean; failCommit?: { next: boolean } } = {}) {
  const raw = new BetterSqlite3(':memory:');
  const database =
    opts.plain || opts.failCommit
      ? new Proxy(raw, {
          get(target, prop) {
            if (prop === 'inTransaction' && opts.plain) return undefined;
            if (prop === 'prepare' && opts.failCommit)
              return (text: string) => {
                if (!/^\s*commit\b/i.test(text) || !opts.failCommit!.next) return target.prepare(text);
                opts.failCommit!.next = false;
                return {
                  reader: false,
                  run: () => {
                    throw new Error('disk I/O error');
                  },
                };
              };
            const value = Reflect.get(target, prop);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        })
      : raw;
  dialect = new FifoSqliteDialect({ database });
  db = new Kysely<Db>({ dialect });
  await db.schema
    .createTable('t')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('v', 'text')
    .execute();
  return db;
}

describe('FifoSqliteDialect', () => {
  it('runs many queries at once, each in its turn, in the order they asked', async () => {
    const db = await open();
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        await db
          .insertInto('t')
          .values({ id: i, v: `v${i}` })
          .execute();
        order.push(i);
      }),
    );
    expect(order).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(
      (
        await db
          .selectFrom('t')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ).toBe(100);
  });

  it('keeps a transaction to itself while others wait, and frees the connection when it fails', async () => {
    const db = await open();
    const seen: string[] = [];
    const tx = db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 1, v: 'in tx' }).execute();
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen.push('tx');
    });
    const outside = db
      .selectFrom('t')
      .selectAll()
      .execute()
      .then((rows) => (seen.push('read'), rows));
    await tx;
    expect(await outside).toEqual([{ id: 1, v: 'in tx' }]);
    expect(seen).toEqual(['tx', 'read']);
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('t').values({ id: 2, v: 'x' }).execute();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(sql`select nonsense from nowhere`.execute(db)).rejects.toThrow();
    expect(await db.selectFrom('t').select('id').execute()).toEqual([{ id: 1 }]);
  });

  it('supports savepoints inside a controlled transaction', async () => {
    const db = await open();
    const trx = await db.startTransaction().execute();
    await trx.insertInto('t').values({ id: 1, v: 'kept' }).execute();
    const sp = await trx.savepoint('before "two"').execute();
    await sp.insertInto('t').values({ id: 2, v: 'undone' }).execute();
    const back = await sp.rollbackToSavepoint('before "two"').execute();
    const released = await back.releaseSavepoint('before "two"').execute();
    await released.commit().execute();
    expect(await db.selectFrom('t').selectAll().execute()).toEqual([{ id: 1, v: 'kept' }]);
  });

  it('streams while other queries wait their turn', async () => {
    const db = await open();
    await db
      .insertInto('t')
      .values([1, 2, 3].map((id) => ({ id, v: String(id) })))
      .execute();
    const streamed: number[] = [];
    const reading = (async () => {
      for await (const row of db.selectFrom('t').select('id').orderBy('id').stream()) streamed.push(row.id);
    })();
    const count = db.selectFrom('t').select('id').execute();
    await reading;
    expect(streamed).toEqual([1, 2, 3]);
    expect(await count).toHaveLength(3);
  });

  it("reads at once only while the connection is free: never inside another caller's transaction", async () => {
    const db = await open();
    await db.insertInto('t').values({ id: 1, v: 'one' }).execute();
    const select = 'select "id", "v" from "t" order by "id"';
    expect(dialect.readNow(select, [])).toEqual([{ id: 1, v: 'one' }]);
    // Not a read: left to the queue.
    expect(dialect.readNow('update "t" set "v" = ?', ['x'])).toBeUndefined();
    let insideTx: unknown[] | undefined = [];
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 2, v: 'uncommitted' }).execute();
      // The transaction's own writes are on the one connection: a read now would see them.
      insideTx = dialect.readNow(select, []);
    });
    expect(insideTx).toBeUndefined();
    expect(dialect.readNow(select, [])).toEqual([
      { id: 1, v: 'one' },
      { id: 2, v: 'uncommitted' },
    ]);
    await db.destroy();
    expect(dialect.readNow(select, [])).toBeUndefined();
  });
});

describe('FifoSqliteDialect.transact', () => {
  const insert = (id: number, v: string) => db.insertInto('t').values({ id, v }).compile();
  const rows = () => db.selectFrom('t').selectAll().orderBy('id').execute();

  it('is refused until kysely has opened the driver, and after it closed it', async () => {
    dialect = new FifoSqliteDialect({ database: new BetterSqlite3(':memory:') });
    db = new Kysely<Db>({ dialect });
    expect(dialect.open).toBe(false);
    await expect(dialect.transact(async () => 1)).rejects.toThrow('not open');
    await sql`select 1`.execute(db);
    expect(dialect.open).toBe(true);
    await db.destroy();
    expect(dialect.open).toBe(false);
    await expect(dialect.transact(async () => 1)).rejects.toThrow('not open');
  });

  it("commits the callback's statements and answers its result, in its turn among other queries", async () => {
    await open();
    const order: string[] = [];
    const held = db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 1, v: 'first' }).execute();
      await new Promise((resolve) => setTimeout(resolve, 10));
      order.push('kysely');
    });
    const result = dialect.transact(async (tx) => {
      const seen = await tx.executeQuery(db.selectFrom('t').select('v').compile());
      await tx.executeQuery(insert(2, 'second'));
      order.push('transact');
      return seen.rows;
    });
    await held;
    expect(await result).toEqual([{ v: 'first' }]);
    expect(order).toEqual(['kysely', 'transact']);
    expect(await rows()).toEqual([
      { id: 1, v: 'first' },
      { id: 2, v: 'second' },
    ]);
  });

  it.each([
    ['with group commit', false],
    ['on a driver that does not say whether a transaction is open', true],
  ])('rolls back only its own writes when the callback throws or a statement fails, and frees the connection (%s)', async (_, plain) => {
    await open({ plain });
    await dialect.transact((tx) => tx.executeQuery(insert(1, 'kept')));
    await expect(
      dialect.transact(async (tx) => {
        await tx.executeQuery(insert(2, 'undone'));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(
      dialect.transact(async (tx) => {
        await tx.executeQuery(insert(3, 'undone too'));
        await tx.executeQuery(insert(1, 'same key'));
      }),
    ).rejects.toThrow(/UNIQUE constraint failed/);
    expect(await rows()).toEqual([{ id: 1, v: 'kept' }]);
  });

  it.each([
    ['with group commit', false],
    ['on a driver that does not say whether a transaction is open', true],
  ])('fails when its commit fails, keeping none of its writes; the next one commits (%s)', async (_, plain) => {
    const failCommit = { next: false };
    await open({ plain, failCommit });
    failCommit.next = true;
    await expect(dialect.transact((tx) => tx.executeQuery(insert(1, 'lost')))).rejects.toThrow('disk I/O error');
    expect(failCommit.next).toBe(false);
    await dialect.transact((tx) => tx.executeQuery(insert(2, 'kept')));
    expect(await rows()).toEqual([{ id: 2, v: 'kept' }]);
  });

  it('refuses a statement on its executor once it has ended', async () => {
    await open();
    let kept: Executor | undefined;
    await dialect.transact(async (tx) => {
      kept = tx;
    });
    await expect(kept!.executeQuery(insert(1, 'late'))).rejects.toThrow('the transaction has ended');
    expect(await rows()).toEqual([]);
  });

  it('runs many at once one after another: each reads what the one before it wrote', async () => {
    await open();
    await dialect.transact((tx) => tx.executeQuery(insert(1, '0')));
    const read = db.selectFrom('t').select('v').where('id', '=', 1).compile();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        dialect
          .transact(async (tx) => {
            const [row] = (await tx.executeQuery(read)).rows;
            await tx.executeQuery(
              db
                .updateTable('t')
                .set({ v: String(Number(row.v) + 1) })
                .where('id', '=', 1)
                .compile(),
            );
            // One in five fails after writing: its increment must not count.
            if (i % 5 === 4) throw new Error('undone');
          })
          .catch(() => undefined),
      ),
    );
    expect(await rows()).toEqual([{ id: 1, v: '40' }]);
  });
});
