// Group commit for the one SQLite connection (FifoSqliteDialect). A commit
// writes every page its transaction changed to the WAL, and consecutive
// writes of the job queue change the same few pages (a job's row, the
// indexes on its status, the counters), so while callers queue for the
// connection their writes run one after another inside one physical
// transaction and share its commit:
// - each caller's transaction is a SAVEPOINT inside it (its rollback undoes
//   only its own writes), a write outside a transaction a plain statement in it;
// - it commits when the holder leaves and nobody waits, after MAX_GROUP
//   callers, or when it has not written (so it never holds the write lock
//   unasked); a lone write is a transaction of its own, as before;
// - a caller whose statements wrote is answered only once that commit is
//   done (and fails if it fails): what it was told is stored, is on disk.
// Callers still run one at a time, in order, so each sees the one before it
// as it would have after its commit, and compare-and-set stays what it was.
// What differs: a read within the group can see a write whose commit is
// still to come (its caller not answered yet); the commit failing (disk
// full) takes back every write of the group. A controlled transaction
// (startTransaction) is told it committed before the group's commit.
// (Waiting for the end of the event loop's turn to gather more writes into
// each commit cost more than it saved: claims and submissions wait on each
// other's answers, and each answer then waits a turn.)
import type { QueryResult, SqliteStatement } from 'kysely';

/** The driver, as far as grouping needs it: it must say whether a transaction is open (better-sqlite3 does). */
export interface GroupDatabase {
  prepare(sql: string): SqliteStatement;
  readonly inTransaction: boolean;
}

/** Callers sharing one commit at most; bounds how long an answer waits and the write lock is held. */
const MAX_GROUP = 64;
const READ = /^\s*select\b/i;
const UNIT = 'graphrun_unit';

interface Group {
  waiting: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
  units: number;
  wrote: boolean;
}

export class CommitGroups {
  readonly #db: GroupDatabase;
  readonly #queued: () => boolean;
  #group: Group | null = null;
  /** The holder is inside its transaction (its savepoint). */
  #inTx = false;
  /** The holder wrote: its answer waits for the group's commit. */
  #durable = false;

  /** `queued`: whether anyone waits for the connection now. */
  constructor(db: GroupDatabase, queued: () => boolean) {
    this.#db = db;
    this.#queued = queued;
  }

  /** A new holder has the connection. */
  acquired(): void {
    this.#inTx = false;
    this.#durable = false;
  }

  /** Runs one of the holder's statements (`run`), keeping track of what it wrote. */
  async execute<R>(sql: string, run: () => Promise<QueryResult<R>>): Promise<QueryResult<R>> {
    const write = !READ.test(sql);
    // A write outside a transaction with others waiting: it starts a group they can join.
    if (write && !this.#inTx && this.#group === null && this.#queued()) this.#open();
    try {
      const result = await run();
      if (write && this.#group !== null) {
        this.#group.wrote = true;
        this.#durable = true;
      }
      return result;
    } catch (err) {
      this.#check(err);
      throw err;
    }
  }

  begin(): void {
    if (this.#group === null) this.#open();
    this.#run(`savepoint ${UNIT}`);
    this.#inTx = true;
  }

  commit(): void {
    this.#inTx = false;
    this.#run(`release ${UNIT}`);
  }

  rollback(): void {
    this.#inTx = false;
    this.#durable = false;
    // A failure SQLite answers by rolling back the whole transaction (I/O, disk full) has already failed the group.
    if (!this.#db.inTransaction) return;
    this.#run(`rollback to ${UNIT}`);
    this.#run(`release ${UNIT}`);
  }

  /**
   * The holder leaves (before the next one is let in): the group commits now
   * unless someone waits to join it. Resolves once the holder's writes are
   * committed (undefined: nothing to wait for).
   */
  released(): Promise<void> | undefined {
    if (this.#inTx) this.rollback();
    const group = this.#group;
    if (group === null) return undefined;
    group.units++;
    const done = this.#durable ? new Promise<void>((resolve, reject) => group.waiting.push({ resolve, reject })) : undefined;
    if (!this.#queued() || !group.wrote || group.units >= MAX_GROUP) this.#commit();
    return done;
  }

  /** Commits what is open, but not a holder's transaction cut short (the connection is left free, or closes). */
  close(): void {
    if (this.#inTx) this.rollback();
    if (this.#group !== null) this.#commit();
  }

  #run(sql: string): void {
    try {
      this.#db.prepare(sql).run([]);
    } catch (err) {
      this.#check(err);
      throw err;
    }
  }

  #open(): void {
    this.#run('begin');
    this.#group = { waiting: [], units: 0, wrote: false };
  }

  #commit(): void {
    const group = this.#group;
    if (group === null) return;
    this.#group = null;
    try {
      this.#db.prepare('commit').run([]);
    } catch (err) {
      if (this.#db.inTransaction) {
        try {
          this.#db.prepare('rollback').run([]);
        } catch {
          // The commit's error is the one to report.
        }
      }
      for (const w of group.waiting) w.reject(err);
      return;
    }
    for (const w of group.waiting) w.resolve();
  }

  /** After a failed statement: SQLite may have rolled the whole transaction back, every write of the group with it. */
  #check(err: unknown): void {
    const group = this.#group;
    if (group === null || this.#db.inTransaction) return;
    this.#group = null;
    const lost = new Error(`the write was rolled back with its commit group: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    for (const w of group.waiting) w.reject(lost);
  }
}
