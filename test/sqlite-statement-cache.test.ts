// The prepared-statement cache in front of better-sqlite3 (storage/sql/statement-cache.ts):
// one statement per SQL text, bounded, cleared on close, safe with streams.
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { withStatementCache } from '../storage/sql/statement-cache.ts';

function counted(database: BetterSqlite3.Database) {
  const prepared: string[] = [];
  const prepare = database.prepare.bind(database);
  return {
    prepared,
    driver: {
      prepare(sql: string) {
        prepared.push(sql);
        return prepare(sql);
      },
      close: () => void database.close(),
    },
  };
}

describe('statement cache', () => {
  it('prepares each SQL text once and hands the same statement back', () => {
    const { driver, prepared } = counted(new BetterSqlite3(':memory:'));
    const cached = withStatementCache(driver);
    const a = cached.prepare('select 1 as x');
    const b = cached.prepare('select 1 as x');
    expect(b).toBe(a);
    expect(b.all([])).toEqual([{ x: 1 }]);
    expect(prepared).toEqual(['select 1 as x']);
    cached.close();
  });

  it('keeps at most `size` statements, evicting the least recently used', () => {
    const { driver, prepared } = counted(new BetterSqlite3(':memory:'));
    const cached = withStatementCache(driver, 2);
    cached.prepare('select 1');
    cached.prepare('select 2');
    cached.prepare('select 1'); // 1 is now the most recent
    cached.prepare('select 3'); // evicts 2
    cached.prepare('select 1');
    cached.prepare('select 2');
    expect(prepared).toEqual(['select 1', 'select 2', 'select 3', 'select 2']);
    cached.close();
  });

  it('clears on close and closes the driver', () => {
    const database = new BetterSqlite3(':memory:');
    const cached = withStatementCache(database);
    cached.prepare('select 1');
    cached.close();
    expect(database.open).toBe(false);
    expect(() => cached.prepare('select 1')).toThrow();
  });

  it('gives a fresh statement while the cached one is still iterating', () => {
    const cached = withStatementCache(new BetterSqlite3(':memory:'));
    const sql = 'select value from json_each(?)';
    const outer = cached.prepare(sql);
    const rows: unknown[] = [];
    for (const row of outer.iterate(['[1,2]'])) rows.push(row, cached.prepare(sql).all(['[3]']));
    expect(rows).toEqual([{ value: 1 }, [{ value: 3 }], { value: 2 }, [{ value: 3 }]]);
    cached.close();
  });

  it('runs reads, writes, RETURNING and streams through kysely', async () => {
    const database = new BetterSqlite3(':memory:');
    const db = new Kysely<{ t: { id: number; v: string } }>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
    await db.schema
      .createTable('t')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('v', 'text')
      .execute();
    for (let round = 0; round < 3; round++) {
      const inserted = await db
        .insertInto('t')
        .values({ id: round, v: `v${round}` })
        .returning('id')
        .executeTakeFirstOrThrow();
      expect(inserted.id).toBe(round);
      const updated = await db.updateTable('t').set({ v: 'x' }).where('id', '=', round).executeTakeFirst();
      expect(updated.numUpdatedRows).toBe(1n);
      expect(await db.selectFrom('t').selectAll().where('id', '=', round).execute()).toEqual([{ id: round, v: 'x' }]);
    }
    const streamed: number[] = [];
    for await (const row of db.selectFrom('t').select('id').orderBy('id').stream()) streamed.push(row.id);
    expect(streamed).toEqual([0, 1, 2]);
    await db.transaction().execute(async (tx) => {
      await tx.deleteFrom('t').where('id', '=', 0).execute();
    });
    expect(await db.selectFrom('t').select('id').orderBy('id').execute()).toEqual([{ id: 1 }, { id: 2 }]);
    await db.destroy();
    expect(database.open).toBe(false);
  });
});
