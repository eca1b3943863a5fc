// The one connection the PostgreSQL event bus LISTENs on. A session hears
// only the channels it LISTENs to, and only while it lives, so it is kept
// apart from the pool's traffic and brought back when it drops: the server
// ended it (pg_terminate_backend, a restart), the network lost it (found by
// a periodic probe, since a half-open socket says nothing). A new session
// LISTENs to every channel again and reports them heard: what was sent in
// between is lost, which the bus's subscribers make up by re-reading rows.
// Commands run in the order they were given (one session), so a channel is
// reported heard only once its latest LISTEN has answered.

/** The part of a pg Client (checked out of the pool) this file uses. */
export interface PgListenClientLike {
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  /** `true`: close the connection instead of returning it to the pool. */
  release(destroy?: boolean): void;
}

export interface ListenConnectionOptions {
  connect(): Promise<PgListenClientLike>;
  onNotification(channel: string, payload: string): void;
  /** These channels are heard from now on (after their LISTEN, or a new session's). */
  onListening(channels: string[]): void;
  onError(err: unknown): void;
  /** How often the session is checked, and how long the check may take before it counts as lost. */
  probeIntervalMs?: number;
  probeTimeoutMs?: number;
}

export interface ListenConnection {
  listen(channel: string): void;
  unlisten(channel: string): void;
  /** Sessions opened so far (1 + reconnects). */
  readonly sessions: number;
  close(): void;
}

/** The name in a LISTEN command: always quoted, so any channel name is one identifier. */
export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;

interface Session {
  client: PgListenClientLike;
  lost: boolean;
  probe?: ReturnType<typeof setInterval>;
  /** The session's queries, one after another: pg deprecates a query sent while another runs (an error in pg 9). */
  queue: Promise<unknown>;
}

/** Runs `sql` on the session once its earlier queries have answered. */
function run(s: Session, sql: string): Promise<unknown> {
  const result = s.queue.then(() => s.client.query(sql));
  s.queue = result.catch(() => undefined);
  return result;
}

export function createListenConnection(opts: ListenConnectionOptions): ListenConnection {
  const probeIntervalMs = opts.probeIntervalMs ?? 30_000;
  const probeTimeoutMs = opts.probeTimeoutMs ?? 10_000;
  /** Channels wanted, each with the token of its latest listen(): an older LISTEN's answer must not count for a newer one. */
  const wanted = new Map<string, object>();
  let session: Session | null = null;
  let connecting = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let failures = 0;
  let sessions = 0;
  let closed = false;

  function lose(s: Session, err: unknown) {
    if (s.lost) return;
    s.lost = true;
    clearInterval(s.probe);
    if (session === s) session = null;
    try {
      s.client.release(true);
    } catch {
      // already gone
    }
    if (closed) return;
    opts.onError(err);
    reconnectLater();
  }

  function reconnectLater() {
    if (closed || retry !== undefined || wanted.size === 0) return;
    const delay = Math.min(RETRY_MIN_MS * 2 ** failures, RETRY_MAX_MS);
    failures++;
    retry = setTimeout(() => {
      retry = undefined;
      void open();
    }, delay);
    (retry as { unref?: () => void }).unref?.();
  }

  async function open() {
    if (closed || session || connecting) return;
    connecting = true;
    let s: Session | undefined;
    try {
      const client = await opts.connect();
      sessions++;
      const opened: Session = (s = { client, lost: false, queue: Promise.resolve() });
      client.on('notification', (m) => {
        if (session === opened) opts.onNotification(m.channel, m.payload ?? '');
      });
      client.on('error', (err) => lose(opened, err));
      client.on('end', () => lose(opened, new Error('the LISTEN connection ended')));
      if (closed) return lose(opened, null);
      session = opened;
      connecting = false;
      const batch = [...wanted];
      // One round trip; the name shows the session in pg_stat_activity.
      await run(opened, ["SET application_name = 'graphrun events'", ...batch.map(([name]) => `LISTEN ${quoteIdent(name)}`)].join('; '));
      if (session !== opened) return;
      failures = 0;
      opened.probe = setInterval(() => probe(opened), probeIntervalMs);
      (opened.probe as { unref?: () => void }).unref?.();
      const heard = batch.filter(([name, token]) => wanted.get(name) === token).map(([name]) => name);
      if (heard.length > 0) opts.onListening(heard);
    } catch (err) {
      if (s) return lose(s, err);
      opts.onError(err);
      reconnectLater();
    } finally {
      connecting = false;
    }
  }

  function probe(s: Session) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the LISTEN connection did not answer within ${probeTimeoutMs} ms`)), probeTimeoutMs);
    });
    Promise.race([run(s, 'select 1'), timeout])
      .catch((err: unknown) => lose(s, err))
      .finally(() => clearTimeout(timer));
  }

  function command(name: string, token: object | null) {
    const s = session;
    if (!s) return void open();
    run(s, `${token ? 'LISTEN' : 'UNLISTEN'} ${quoteIdent(name)}`).then(
      () => {
        if (token && session === s && wanted.get(name) === token) opts.onListening([name]);
      },
      (err: unknown) => lose(s, err),
    );
  }

  return {
    listen(name) {
      if (closed) throw new Error('the event bus is closed');
      const token = {};
      wanted.set(name, token);
      command(name, token);
    },
    unlisten(name) {
      if (!wanted.delete(name) || closed) return;
      command(name, null);
    },
    get sessions() {
      return sessions;
    },
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(retry);
      wanted.clear();
      if (session) lose(session, null);
    },
  };
}
