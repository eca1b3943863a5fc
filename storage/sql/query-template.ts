// Hot reads built and compiled once. kysely spends longer building and
// compiling a small query (parsing references, visiting the tree) than
// SQLite spends running it, on every call; a template is compiled with
// marker values once, and each call only swaps the real values in.
import { type Compilable, type CompiledQuery, createQueryId, type Kysely } from 'kysely';

const marker = (i: number) => `\u0000graphrun-template-arg-${i}\u0000`;

/**
 * Runs a compiled SELECT without kysely's executor when it can (rows as
 * `execute()` gives them), or answers undefined to have it queued through
 * kysely: e.g. FifoSqliteDialect's `readNow`.
 */
export type DirectReader = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

/**
 * `build` must use each argument only as a plain bound value (`where(col,
 * '=', arg)`), never to shape the query (no `in` lists, no branches on it):
 * it runs once, with marker strings for the arguments. Rows come back as
 * `execute()` would return them.
 */
export function queryTemplate<A extends unknown[], R, DB>(
  db: Kysely<DB>,
  arity: A['length'],
  build: (...args: A) => Compilable<R>,
  direct?: DirectReader,
): (...args: A) => Promise<R[]> {
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
  const run = async (query: CompiledQuery<R>, parameters: unknown[]) =>
    (await db.executeQuery<R>({ ...query, parameters, queryId: createQueryId() })).rows;
  return (...args) => {
    try {
      compiled ??= compile();
      const parameters = compiled.parameters.map((p, i) => (slots[i] === -1 ? p : args[slots[i]]));
      const rows = direct?.(compiled.sql, parameters);
      return rows === undefined ? run(compiled, parameters) : Promise.resolve(rows as R[]);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}
