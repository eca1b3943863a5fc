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
import {
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';

class FifoDriver implements Driver {
  readonly #inner: Driver;
  readonly #database: SqliteDatabase | undefined;
  readonly #waiting: (() => void)[] = [];
  #held = false;
  #ready = false;

  constructor(inner: Driver, database: SqliteDatabase | undefined) {
    this.#inner = inner;
    this.#database = database;
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

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#held) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#held = true;
    try {
      return await this.#inner.acquireConnection();
    } catch (err) {
      this.#handOff();
      throw err;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.#inner.releaseConnection(connection);
    } finally {
      this.#handOff();
    }
  }

  /** The next waiter's turn (still held), or free. */
  #handOff(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#inner.beginTransaction(connection, settings);
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(connection);
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(connection);
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
}
