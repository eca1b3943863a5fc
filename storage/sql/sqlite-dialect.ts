// kysely's SqliteDialect with its single connection handed out first come,
// first served. kysely's own SqliteDriver makes every waiter await one shared
// promise and re-check: each release wakes all of them, and all but one go
// back to sleep. With a few dozen requests in flight that is dozens of wake-ups
// per query, more than a small indexed read costs. Here each waiter has its
// own turn, so kysely's driver never sees more than one caller at a time.
//
// A read can also run at once (`readNow`) while nobody holds the connection:
// the driver is synchronous, so running the statement there and then is what
// acquiring, running and releasing would do, minus a dozen promise hops
// through kysely that cost more than an indexed read.
//
// Writes that queue up behind each other share one commit (group commit,
// group-commit.ts): a commit writes every page the transaction changed to the
// WAL, and the writes of a job (its row, the indexes on its status, the
// counters) land on the same few pages, so a commit per write costs several
// times what the writes do.
import {
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  type SqliteStatement,
  type TransactionSettings,
} from 'kysely';
import { CommitGroups, type GroupDatabase } from './group-commit.ts';
import type { Executor } from './query-template.ts';

// Moves when another connection (of any process) has committed since this one last asked.
const DATA_VERSION = 'PRAGMA data_version';
// Rows this connection has changed since it opened: moves with each of its own writes. It reads no table, so it starts no transaction.
const TOTAL_CHANGES = 'SELECT total_changes()';

/**
 * The one value of a one-row, one-column statement. better-sqlite3 hands it
 * over bare (pluck): in the server that took half the time of a row object.
 */
function scalar(statement: SqliteStatement): () => unknown {
  const plucking = statement as Partial<{ pluck(on: boolean): unknown; get(): unknown }>;
  if (typeof plucking.pluck === 'function' && typeof plucking.get === 'function') {
    plucking.pluck(true);
    return () => plucking.get!();
  }
  return () => {
    const row = statement.all([])[0];
    return row === null || typeof row !== 'object' ? undefined : Object.values(row)[0];
  };
}

class FifoDriver implements Driver {
  readonly #inner: Driver;
  readonly #database: SqliteDatabase | undefined;
  readonly #waiting: (() => void)[] = [];
  #held = false;
  #ready = false;
  /** Group commit, when the driver says whether a transaction is open (better-sqlite3 does); else one commit per write. */
  readonly #groups: CommitGroups | undefined;
  #connection: DatabaseConnection | undefined;
  /** The two halves of commitMark, prepared on first use (no other query has their text, so plucking them harms none). */
  #marks: [() => unknown, () => unknown] | undefined;

  constructor(inner: Driver, database: SqliteDatabase | undefined) {
    this.#inner = inner;
    this.#database = database;
    const db = database as Partial<GroupDatabase> | undefined;
    if (db !== undefined && typeof db.inTransaction === 'boolean')
      this.#groups = new CommitGroups(db as GroupDatabase, () => this.#waiting.length > 0);
  }

  get ready(): boolean {
    return this.#ready;
  }

  async init(): Promise<void> {
    await this.#inner.init();
    this.#ready = true;
  }

  /**
   * The rows of a SELECT run now, or undefined when the connection is taken
   * (a transaction, a stream, a query between its awaits) or not open: then
   * the caller queues through kysely like any other query. While it is free
   * nobody waits, so going first jumps no queue.
   */
  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    if (!this.#ready || this.#held || this.#database === undefined) return undefined;
    const statement = this.#database.prepare(sql);
    return statement.reader ? statement.all(parameters) : undefined;
  }

  /** See FifoSqliteDialect.commitMark. */
  commitMark(): string | undefined {
    // Free and outside any transaction: every change this connection made is committed or undone.
    if (!this.#ready || this.#held || this.#database === undefined) return undefined;
    if ((this.#database as { inTransaction?: boolean }).inTransaction === true) return undefined;
    this.#marks ??= [scalar(this.#database.prepare(DATA_VERSION)), scalar(this.#database.prepare(TOTAL_CHANGES))];
    const [version, changes] = [this.#marks[0](), this.#marks[1]()];
    return version === undefined || changes === undefined ? undefined : `${version}:${changes}`;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#held) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#held = true;
    let connection: DatabaseConnection;
    try {
      connection = await this.#inner.acquireConnection();
    } catch (err) {
      this.#handOff();
      throw err;
    }
    const groups = this.#groups;
    if (groups === undefined) return connection;
    groups.acquired();
    // One wrapper for the one connection: its statements go through the group's bookkeeping.
    return (this.#connection ??= {
      executeQuery: (query) => groups.execute(query.sql, () => connection.executeQuery(query)),
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    });
  }

  /**
   * See FifoSqliteDialect.transact: what kysely's transaction does (acquire,
   * begin, the callback, commit or roll back, release), minus the Kysely and
   * connection provider it builds per transaction and the promise hops each
   * statement takes through them.
   */
  async transact<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    const connection = await this.acquireConnection();
    let begun = false;
    let over = false;
    // As a kysely Transaction refuses statements once it ended: a stray one would run outside it, out of turn.
    const tx: Executor = {
      executeQuery: async (query) => {
        if (over) throw new Error('the transaction has ended');
        return connection.executeQuery(query);
      },
    };
    try {
      await this.beginTransaction(connection, {});
      begun = true;
      const result = await fn(tx);
      await this.commitTransaction(connection);
      return result;
    } catch (err) {
      // As kysely does: a failed commit is rolled back too.
      if (begun) await this.rollbackTransaction(connection);
      throw err;
    } finally {
      over = true;
      await this.releaseConnection(connection);
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // The holder's writes wait for their group's commit; the connection goes on to the next holder first.
    let durable: Promise<void> | undefined;
    try {
      durable = this.#groups?.released();
      await this.#inner.releaseConnection(connection);
    } finally {
      this.#handOff();
    }
    await durable;
  }

  /** The next waiter's turn (still held), or free: then no commit group is left open. */
  #handOff(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else {
      this.#groups?.close();
      this.#held = false;
    }
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (this.#groups) this.#groups.begin();
    else await this.#inner.beginTransaction(connection, settings);
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#groups) this.#groups.commit();
    else await this.#inner.commitTransaction(connection);
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#groups) this.#groups.rollback();
    else await this.#inner.rollbackTransaction(connection);
  }
  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.#inner.savepoint!(connection, name, compile);
  }
  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.#inner.rollbackToSavepoint!(connection, name, compile);
  }
  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.#inner.releaseSavepoint!(connection, name, compile);
  }
  destroy(): Promise<void> {
    this.#ready = false;
    this.#groups?.close();
    return this.#inner.destroy();
  }
}

export class FifoSqliteDialect extends SqliteDialect {
  readonly #database: SqliteDatabase | undefined;
  #driver: FifoDriver | undefined;

  constructor(config: SqliteDialectConfig) {
    super(config);
    // A database given as a factory is only known inside kysely's driver: those read through the queue.
    this.#database = typeof config.database === 'function' ? undefined : config.database;
  }

  override createDriver(): Driver {
    return (this.#driver = new FifoDriver(super.createDriver(), this.#database));
  }

  /**
   * A SELECT's rows right away when the connection is free, else undefined.
   * Rows come straight from the driver: only for a Kysely instance without
   * plugins that transform results.
   */
  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    return this.#driver?.readNow(sql, parameters);
  }

  /**
   * A Transact (query-template.ts) for statements compiled ahead
   * (statementTemplate): a transaction straight on the driver, whose executor
   * runs each compiled query on the connection. Not for kysely's query
   * builder, which wants a Transaction.
   */
  transact<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    if (!this.open) return Promise.reject(new Error('the SQLite driver is not open'));
    return this.#driver!.transact(fn);
  }

  /** True once kysely has opened the driver (its first query), and until it is destroyed: transact works. */
  get open(): boolean {
    return this.#driver?.ready === true;
  }

  /**
   * A value that differs from any earlier one once anything has been
   * committed to the database since: by this connection (its count of changed
   * rows) or by any other, in this process or another (SQLite's data_version).
   * Undefined while the connection is taken: a transaction may be open on it.
   * Two small statements, where a read of a row costs several times more.
   */
  commitMark(): string | undefined {
    return this.#driver?.commitMark();
  }
}
