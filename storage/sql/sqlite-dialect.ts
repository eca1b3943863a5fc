// kysely's SqliteDialect with its single connection handed out first come,
// first served. kysely's own SqliteDriver makes every waiter await one shared
// promise and re-check: each release wakes all of them, and all but one go
// back to sleep. With a few dozen requests in flight that is dozens of wake-ups
// per query, more than a small indexed read costs. Here each waiter has its
// own turn, so kysely's driver never sees more than one caller at a time.
import { SqliteDialect, type DatabaseConnection, type Driver, type QueryCompiler, type TransactionSettings } from 'kysely';

class FifoDriver implements Driver {
  readonly #inner: Driver;
  readonly #waiting: (() => void)[] = [];
  #held = false;

  constructor(inner: Driver) {
    this.#inner = inner;
  }

  init(): Promise<void> {
    return this.#inner.init();
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
    return this.#inner.destroy();
  }
}

export class FifoSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    return new FifoDriver(super.createDriver());
  }
}
