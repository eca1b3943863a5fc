// Hot queries built and compiled once. kysely spends longer building and
// compiling a small query (parsing references, visiting the tree) than
// SQLite spends running it, on every call; a template is compiled with
// marker values once, and each call only swaps the real values in.
// Reads of the whole database use queryTemplate; the writes (and the reads
// inside a transaction) use statementTemplate, which runs on the executor
// given with each call: the database or a transaction.
import { type Compilable, type CompiledQuery, createQueryId, type Kysely, type QueryResult } from 'kysely';

const marker = (i: number) => `\u0000graphrun-template-arg-${i}\u0000`;

/**
 * Runs a compiled SELECT without kysely's executor when it can (rows as
 * `execute()` gives them), or answers undefined to have it queued through
 * kysely: e.g. FifoSqliteDialect's `readNow`.
 */
export type DirectReader = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

/**
 * `build` compiled on first use; the function binds a call's arguments into
 * it. `build` must use each argument only as a plain bound value (`where(col,
 * '=', arg)`, a value of `set` or `values`), never to shape the query (no `in`
 * lists, no branches on it): it runs once, with marker strings for the arguments.
 */
function compileTemplate<A extends unknown[], R>(arity: A['length'], build: (...args: A) => Compilable<R>): (args: A) => CompiledQuery<R> {
  let compiled: CompiledQuery<R> | undefined;
  // For each parameter of the compiled query: the argument it takes, or -1 for a constant.
  let slots: number[] = [];
  const compile = () => {
    const markers = Array.from({ length: arity }, (_, i) => marker(i));
    const query = build(...(markers as A)).compile();
    slots = query.parameters.map((p) => (typeof p === 'string' ? markers.indexOf(p) : -1));
    const used = new Set(slots);
    // An argument that never shows up as a parameter was used to shape the query.
    for (let i = 0; i < arity; i++) if (!used.has(i)) throw new Error(`queryTemplate: argument ${i} is not a bound parameter`);
    return query;
  };
  return (args) => {
    compiled ??= compile();
    const parameters = compiled.parameters.map((p, i) => (slots[i] === -1 ? p : args[slots[i]]));
    return { ...compiled, parameters, queryId: createQueryId() };
  };
}

/** A read of `db` (see compileTemplate for `build`); rows come back as `execute()` would return them. */
export function queryTemplate<A extends unknown[], R, DB>(
  db: Kysely<DB>,
  arity: A['length'],
  build: (...args: A) => Compilable<R>,
  direct?: DirectReader,
): (...args: A) => Promise<R[]> {
  const bind = compileTemplate(arity, build);
  return (...args) => {
    try {
      const query = bind(args);
      const rows = direct?.(query.sql, query.parameters);
      return rows === undefined ? db.executeQuery<R>(query).then((r) => r.rows) : Promise.resolve(rows as R[]);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/** What runs a compiled statement: a Kysely instance or a transaction of one. */
export interface Executor {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/**
 * Runs `fn` as one transaction, its statements on the executor it is given:
 * committed when `fn` resolves, rolled back when it rejects. kyselyTransact is
 * kysely's own; a dialect may hand one that skips kysely's transaction
 * machinery (FifoSqliteDialect.transact).
 */
export type Transact = <T>(fn: (tx: Executor) => Promise<T>) => Promise<T>;

export const kyselyTransact =
  <DB>(db: Kysely<DB>): Transact =>
  (fn) =>
    db.transaction().execute(fn);

/**
 * Any statement (see compileTemplate for `build`), run on the executor of
 * each call: a transaction's, or the database. The result is kysely's
 * (`rows`, `numAffectedRows`), as `executeQuery` gives it. `read`: a SELECT
 * run on `read.db` itself goes through `read.direct` when that answers.
 */
export function statementTemplate<A extends unknown[], R>(
  arity: A['length'],
  build: (...args: A) => Compilable<R>,
  read?: { db: Executor; direct?: DirectReader },
): (executor: Executor, ...args: A) => Promise<QueryResult<R>> {
  const bind = compileTemplate(arity, build);
  return (executor, ...args) => {
    try {
      const query = bind(args);
      // A read of the database itself (no transaction) may take the direct way, as queryTemplate's do.
      const rows = read?.direct !== undefined && executor === read.db ? read.direct(query.sql, query.parameters) : undefined;
      return rows === undefined ? executor.executeQuery<R>(query) : Promise.resolve({ rows: rows as R[] });
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/**
 * Templates of one statement whose shape varies with a few flags (which
 * columns an UPDATE sets, which guards it checks): one compiled per shape,
 * made on first use. `shape` names it; the set of names must stay small.
 */
export function templateFamily<T>(make: (shape: string) => T): (shape: string) => T {
  const made = new Map<string, T>();
  return (shape) => {
    let t = made.get(shape);
    if (t === undefined) made.set(shape, (t = make(shape)));
    return t;
  };
}
