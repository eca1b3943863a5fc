// Keeps this instance's engine pool in line with the stored engine servers
// (storage's engineServers, changed through /ops/servers): at start, every
// stored active server joins and every stored draining one drains; then
// again every serverSyncIntervalMs and whenever another instance on the
// storage says the set changed (the event bus), so every runner on a shared
// database converges on the same set.
//
// Only servers seen in the store are ever removed here: a --worker URL that
// was never stored stays, as configured. One that was stored and then
// removed leaves (until the next start brings it back from the options).
import type { EngineServerStatus } from '../../../engine/types.ts';
import type { ServiceBase } from '../../context.ts';

export const SERVERS_CHANNEL = 'engine-servers';

export interface ServerSync {
  /** Whether the engine has a pool to change and the storage keeps its members. */
  readonly enabled: boolean;
  start(): Promise<void>;
  /** Brings the engine in line with the store now (calls do not overlap; one asked for during a pass runs after it). */
  reconcile(): Promise<void>;
  /** After this instance changed the stored set: looks again itself and tells the others to look now. */
  changed(): void;
  /** Marks a URL as the store's (the routes apply their change themselves, then this pass agrees). */
  adopt(url: string): void;
  close(): void;
}

export function createServerSync(ctx: ServiceBase): ServerSync {
  const { engine, logger } = ctx;
  const store = ctx.metadata.engineServers;
  const enabled = store !== undefined && engine.addServer !== undefined;
  /** URLs this instance has seen stored: the only ones a pass removes when they are gone. */
  const managed = new Set<string>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopHearing: (() => void) | undefined;
  let pass: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const warn = (what: string) => (err: unknown) => logger.warn(what, { error: String(err) });

  async function apply(): Promise<void> {
    if (!store || !engine.addServer) return;
    // Only URLs known before the read may be removed: one a route adopts meanwhile is not missing, just newer than it.
    const known = [...managed];
    const rows = await store.listEngineServers(ctx.deployment.id);
    if (closed) return;
    const live = new Map<string, EngineServerStatus>((engine.servers?.() ?? []).map((s) => [s.url, s]));
    for (const row of rows) {
      managed.add(row.url);
      const now = live.get(row.url);
      if (row.state === 'active' && (now === undefined || now.state === 'draining')) {
        try {
          engine.addServer(row.url);
        } catch (err) {
          // A row the engine refuses (written by another version, say) must not keep the others out.
          warn('an engine server could not join')(err);
        }
      }
      // A draining server this pool does not have stays out: it would take no job anyway.
      if (row.state === 'draining' && now !== undefined && now.state !== 'draining')
        engine.drainServer?.(row.url).catch(warn('draining an engine server failed'));
    }
    const stored = new Set(rows.map((r) => r.url));
    for (const url of known) {
      if (stored.has(url)) continue;
      managed.delete(url);
      // Not awaited: the removal settles once the jobs there let go, and the next pass must not wait for that.
      if (live.has(url)) engine.removeServer?.(url).catch(warn('removing an engine server failed'));
    }
  }

  function reconcile(): Promise<void> {
    if (!enabled || closed) return Promise.resolve();
    if (pass) {
      again = true;
      return pass;
    }
    pass = apply()
      .catch(warn('reading the stored engine servers failed'))
      .finally(() => {
        pass = undefined;
        if (again) {
          again = false;
          void reconcile();
        }
      });
    return pass;
  }

  return {
    enabled,
    async start() {
      if (!enabled) return;
      // At start the store must answer: a pool missing its registered servers would run on too few.
      await apply();
      stopHearing = ctx.events?.subscribe(
        SERVERS_CHANNEL,
        () => void reconcile(),
        () => void reconcile(),
      );
      if (ctx.config.serverSyncIntervalMs > 0) {
        timer = setInterval(() => void reconcile(), ctx.config.serverSyncIntervalMs);
        (timer as { unref?: () => void }).unref?.();
      }
    },
    reconcile,
    changed() {
      // A pass that read the store before this change would undo it here: one more pass follows it.
      void reconcile();
      ctx.events?.publish(SERVERS_CHANNEL, '').catch(warn('could not tell the other instances of a changed engine server'));
    },
    adopt(url) {
      managed.add(url);
    },
    close() {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      stopHearing?.();
    },
  };
}
