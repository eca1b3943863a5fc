// The two things a probe and the operator's views ask of an instance: does
// its storage answer (within a bound, so a hung database reads as "no"
// rather than hanging the asker), and is its engine ready, with, for an
// engine on a pool of servers, how many of them are healthy.
import type { Engine, EngineReadiness, EngineServerStatus } from '../../engine/types.ts';
import type { ServiceBase } from '../context.ts';
import { errorText } from '../log.ts';

export type StorageCheck = { ok: true } | { ok: false; detail: string };

export interface EngineCheck {
  ok: boolean;
  state: EngineReadiness['state'];
  /** Why it is not ready, in words that name no server (the engine's own detail is for /ops/status). */
  detail?: string;
  /** For an engine on a pool of servers: how many answer their health checks, of how many. */
  servers_healthy?: number;
  servers_total?: number;
}

class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/** `work`, or a TimeoutError once `ms` passed (the work goes on, unawaited). */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Whether the last storage check of this instance failed: failures are logged when they start and end, not per probe. */
const failing = new WeakMap<ServiceBase, boolean>();

/**
 * Runs `probe` (a ping by default) against the metadata store within `ms`.
 * The answer says only that it failed and whether it was slow; the error
 * itself (which may name hosts) goes to the log.
 */
export async function checkStorage(ctx: ServiceBase, ms: number, probe: () => Promise<unknown> = () => ctx.metadata.ping()): Promise<StorageCheck> {
  try {
    await withTimeout(probe(), ms, 'the metadata store');
    if (failing.get(ctx)) ctx.logger.info('the metadata store answers again');
    failing.set(ctx, false);
    return { ok: true };
  } catch (err) {
    if (!failing.get(ctx)) ctx.logger.warn('the metadata store does not answer', { error: errorText(err) });
    failing.set(ctx, true);
    const detail = err instanceof TimeoutError ? err.message : 'the metadata store could not be reached';
    return { ok: false, detail };
  }
}

export function checkEngine(engine: Engine, servers: EngineServerStatus[] | undefined = engine.servers?.()): EngineCheck {
  const { state } = engine.readiness();
  const check: EngineCheck = { ok: state === 'ready', state };
  if (servers !== undefined) {
    check.servers_healthy = servers.filter((s) => s.healthy).length;
    check.servers_total = servers.length;
    if (check.servers_healthy === 0) check.ok = false;
  }
  if (!check.ok) {
    check.detail =
      servers !== undefined
        ? `${check.servers_healthy} of ${check.servers_total} engine servers are healthy (engine ${state})`
        : `the engine is ${state === 'ready' ? 'not ready' : state}`;
  }
  return check;
}
