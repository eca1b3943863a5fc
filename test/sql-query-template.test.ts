// queryTemplate (storage/sql/query-template.ts): compiled once, run with new
// values, the same rows as building the query each time.
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { queryTemplate } from '../storage/sql/query-template.ts';

interface Db {
  t: { id: number; owner: string; v: string | null; n: number };
}

let db: Kysely<Db>;
afterEach(() => db?.destroy());

async function open() {
  db = new Kysely<Db>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });
  await db.schema
    .createTable('t')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('owner', 'text')
    .addColumn('v', 'text')
    .addColumn('n', 'integer')
    .execute();
  await db
    .insertInto('t')
    .values([
      { id: 1, owner: 'a', v: 'x', n: 1 },
      { id: 2, owner: 'a', v: null, n: 5 },
      { id: 3, owner: 'b', v: 'y', n: 9 },
    ])
    .execute();
  return db;
}

describe('queryTemplate', () => {
  it('gives the rows building the query each time would, for every set of values', async () => {
    const db = await open();
    const build = (owner: string, min: number) =>
      db.selectFrom('t').selectAll().where('owner', '=', owner).where('n', '>=', min).where('id', '<', 100).orderBy('id');
    const run = queryTemplate(db, 2, build);
    for (const [owner, min] of [
      ['a', 0],
      ['a', 2],
      ['b', 0],
      ['b', 10],
      ['c', 0],
    ] as const) {
      expect(await run(owner, min)).toEqual(await build(owner, min).execute());
    }
    expect(await run('a', 0)).toEqual([
      { id: 1, owner: 'a', v: 'x', n: 1 },
      { id: 2, owner: 'a', v: null, n: 5 },
    ]);
  });

  it('binds an argument used twice in both places', async () => {
    const db = await open();
    const run = queryTemplate(db, 1, (owner: string) =>
      db
        .selectFrom('t')
        .select('id')
        .where((eb) => eb.or([eb('owner', '=', owner), eb('v', '=', owner)]))
        .orderBy('id'),
    );
    expect(await run('y')).toEqual([{ id: 3 }]);
    expect(await run('a')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('refuses an argument that shapes the query instead of being bound', async () => {
    const db = await open();
    const run = queryTemplate(db, 1, (_unused: string) => db.selectFrom('t').select('id'));
    await expect(run('a')).rejects.toThrow(/argument 0/);
  });

  it('takes rows from a direct reader when it has them, and queues through kysely when it answers undefined', async () => {
    const db = await open();
    const build = (owner: string) => db.selectFrom('t').select(['id', 'n']).where('owner', '=', owner).orderBy('id');
    const calls: Array<{ sql: string; parameters: readonly unknown[] }> = [];
    let answer: unknown[] | undefined = [{ id: 42, n: 0 }];
    const run = queryTemplate(db, 1, build, (sql, parameters) => (calls.push({ sql, parameters }), answer));
    expect(await run('a')).toEqual([{ id: 42, n: 0 }]);
    expect(calls).toEqual([{ sql: build('a').compile().sql, parameters: ['a'] }]);
    answer = undefined;
    expect(await run('a')).toEqual([
      { id: 1, n: 1 },
      { id: 2, n: 5 },
    ]);
    expect(calls[1].parameters).toEqual(['a']);
  });
});
