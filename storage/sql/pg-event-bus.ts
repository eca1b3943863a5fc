// The storage's event bus on PostgreSQL: NOTIFY through the pool, LISTEN on
// one connection of its own (pg-listen-connection.ts).
//
// A NOTIFY carries `<origin> =<payload>`, origin being this bus's random id,
// so a bus skips what it sent itself (its own session hears it like any
// other). A payload that would not fit PostgreSQL's 8000 bytes goes into
// `event_payloads` and the NOTIFY carries `<origin> @<row id>` instead, in
// the same statement, so the row is committed when the NOTIFY is heard; the
// receivers fetch it. Such rows live `spillTtlMs` (a few seconds: receivers
// fetch at once) and are deleted by the bus that wrote them, plus once at
// start for rows a stopped instance left. A row already gone when fetched
// counts as a missed message (the channel's subscribers re-read).
//
// Channels are namespaced by the storage's schema (pg-channel-name.ts).
import { type Kysely, sql } from 'kysely';
import type { EventBus } from '../interfaces/event-bus.ts';
import { pgChannelName } from './pg-channel-name.ts';
import { createListenConnection, type PgListenClientLike } from './pg-listen-connection.ts';
import type { Database } from './schema.ts';

export { pgChannelName } from './pg-channel-name.ts';
export type { PgListenClientLike } from './pg-listen-connection.ts';

/** PostgreSQL's bound on a NOTIFY payload (it must be shorter), in bytes. */
export const NOTIFY_LIMIT_BYTES = 8000;

export interface PgEventBusOptions {
  /** Through the pool: NOTIFY, and the payloads too large for one. */
  db: Kysely<Database>;
  /** A connection for LISTEN, closed (not returned) when the bus lets go of it. */
  connect(): Promise<PgListenClientLike>;
  /** The storage's schema; null for the connection's default. */
  schema: string | null;
  /** How long a payload too large for a NOTIFY is kept for its receivers. Default 10 s. */
  spillTtlMs?: number;
  /** Largest payload accepted. Default 32 MiB. */
  maxPayloadBytes?: number;
  /** Probe interval of the LISTEN connection. Default 30 s. */
  probeIntervalMs?: number;
  now?: () => number;
}

export interface PgEventBusStats {
  /** Messages published, and of those the ones that went by reference. */
  published: number;
  spilled: number;
  /** Characters of payload published (inline and by reference). */
  chars: number;
  /** Messages heard from other instances, and of those fetched by reference. */
  received: number;
  fetched: number;
  /** LISTEN sessions opened (1 + reconnects), 0 before the first subscription. */
  sessions: number;
}

export interface PgEventBus extends EventBus {
  stats(): PgEventBusStats;
  /** Deletes payload rows past their life now; returns how many (also done on a timer after spilling). */
  sweep(): Promise<number>;
}

interface Subscriber {
  listener: (payload: string) => void;
  onLive?: () => void;
}

interface Channel {
  subscribers: Set<Subscriber>;
  live: boolean;
  /** Deliveries wait for earlier ones whose payload is being fetched: a channel's messages keep their order. */
  tail: Promise<void>;
  fetching: number;
}

/** UTF-8 length without encoding when the answer is plain from the string's length. */
function fitsNotify(text: string): boolean {
  if (text.length >= NOTIFY_LIMIT_BYTES) return false;
  if (text.length * 3 < NOTIFY_LIMIT_BYTES) return true;
  return new TextEncoder().encode(text).byteLength < NOTIFY_LIMIT_BYTES;
}

export function createPgEventBus(opts: PgEventBusOptions): PgEventBus {
  const { db, schema } = opts;
  const now = opts.now ?? Date.now;
  const spillTtlMs = opts.spillTtlMs ?? 10_000;
  const maxPayloadBytes = opts.maxPayloadBytes ?? 32 * 1024 * 1024;
  const origin = crypto.randomUUID().slice(0, 13);
  const channels = new Map<string, Channel>();
  const errorListeners = new Set<(err: unknown) => void>();
  const inFlight = new Set<Promise<unknown>>();
  const stats = { published: 0, spilled: 0, chars: 0, received: 0, fetched: 0 };
  let closed = false;
  let spilledSinceSweep = false;
  let swept = false;
  let sweepTimer: ReturnType<typeof setInterval> | undefined;

  const report = (err: unknown) => {
    for (const listener of errorListeners) listener(err);
  };

  const conn = createListenConnection({
    connect: opts.connect,
    onNotification: receive,
    onListening(names) {
      for (const name of names) {
        const ch = channels.get(name);
        if (!ch) continue;
        ch.live = true;
        for (const sub of [...ch.subscribers]) call(() => sub.onLive?.());
      }
      // A stopped instance's rows: gone at the first session, not only once this one spills.
      if (!swept) {
        swept = true;
        track(sweep().catch(report));
      }
    },
    onError(err) {
      for (const ch of channels.values()) ch.live = false;
      report(err);
    },
    probeIntervalMs: opts.probeIntervalMs,
  });

  function call(fn: () => void) {
    try {
      fn();
    } catch (err) {
      report(err);
    }
  }

  function track<T>(p: Promise<T>): Promise<T> {
    inFlight.add(p);
    p.then(
      () => inFlight.delete(p),
      () => inFlight.delete(p),
    );
    return p;
  }

  function receive(name: string, text: string) {
    const ch = channels.get(name);
    const space = text.indexOf(' ');
    if (!ch || space < 0 || text.slice(0, space) === origin) return;
    stats.received++;
    const kind = text[space + 1];
    const body = text.slice(space + 2);
    if (kind === '=' && ch.fetching === 0) return dispatch(ch, body);
    const payload = kind === '=' ? Promise.resolve<string | null>(body) : fetch(body);
    ch.fetching++;
    ch.tail = ch.tail
      .then(() => payload)
      .then(
        (p) => (p === null ? missed(ch) : dispatch(ch, p)),
        (err: unknown) => {
          report(err);
          missed(ch);
        },
      )
      .finally(() => ch.fetching--);
  }

  async function fetch(id: string): Promise<string | null> {
    stats.fetched++;
    const row = await db.selectFrom('event_payloads').select('payload').where('id', '=', id).executeTakeFirst();
    return row?.payload ?? null;
  }

  function dispatch(ch: Channel, payload: string) {
    for (const sub of [...ch.subscribers]) call(() => sub.listener(payload));
  }

  /** A message that could not be had: the subscribers re-read, as after a reconnect. */
  function missed(ch: Channel) {
    for (const sub of [...ch.subscribers]) call(() => sub.onLive?.());
  }

  async function sweep(): Promise<number> {
    spilledSinceSweep = false;
    const result = await db
      .deleteFrom('event_payloads')
      .where('created_at', '<', now() - spillTtlMs)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async function spill(name: string, payload: string) {
    if (new TextEncoder().encode(payload).byteLength > maxPayloadBytes) {
      throw new RangeError(`event payload over ${maxPayloadBytes} bytes`);
    }
    const id = crypto.randomUUID();
    await db
      .with('p', (q) => q.insertInto('event_payloads').values({ id, payload, created_at: now() }).returning('id'))
      .selectFrom('p')
      .select(sql<string>`pg_notify(${name}, ${`${origin} @`}::text || p.id)`.as('n'))
      .execute();
    stats.spilled++;
    spilledSinceSweep = true;
    if (sweepTimer === undefined) {
      sweepTimer = setInterval(() => {
        if (spilledSinceSweep) track(sweep().catch(report));
      }, spillTtlMs);
      (sweepTimer as { unref?: () => void }).unref?.();
    }
  }

  async function publish(channel: string, payload: string): Promise<void> {
    if (closed) throw new Error('the event bus is closed');
    const name = pgChannelName(schema, channel);
    const inline = `${origin} =${payload}`;
    if (fitsNotify(inline)) await sql`select pg_notify(${name}, ${inline})`.execute(db);
    else await spill(name, payload);
    stats.published++;
    stats.chars += payload.length;
  }

  return {
    publish: (channel, payload) => track(publish(channel, payload)),
    subscribe(channel, listener, onLive) {
      if (closed) throw new Error('the event bus is closed');
      const name = pgChannelName(schema, channel);
      const sub: Subscriber = { listener, onLive };
      let ch = channels.get(name);
      if (!ch) {
        ch = { subscribers: new Set([sub]), live: false, tail: Promise.resolve(), fetching: 0 };
        channels.set(name, ch);
        conn.listen(name);
      } else {
        ch.subscribers.add(sub);
        const heard = ch;
        // Not from inside subscribe(): the caller may not hold the unsubscribe function yet.
        if (heard.live && onLive) queueMicrotask(() => heard.subscribers.has(sub) && call(onLive));
      }
      const own = ch;
      return () => {
        if (!own.subscribers.delete(sub) || own.subscribers.size > 0 || channels.get(name) !== own) return;
        channels.delete(name);
        conn.unlisten(name);
      };
    },
    onError(listener) {
      errorListeners.add(listener);
      return () => errorListeners.delete(listener);
    },
    stats: () => ({ ...stats, sessions: conn.sessions }),
    sweep,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweepTimer);
      conn.close();
      channels.clear();
      await Promise.allSettled([...inFlight]);
    },
  };
}
