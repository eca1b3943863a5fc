// The sender of one service instance: takes due rows of the outbox under a
// lease and tries each (attempt.ts), a few at a time. It looks at once when
// this instance wrote rows (wake), when a try ends (the subject's next row
// may be due now), when the earliest retry falls due, and otherwise every
// pollIntervalMs for rows written or freed elsewhere. Every instance on a
// storage runs one; the claims keep them from sending one try twice.
import type { UrlPolicy } from '../../lib/net/url-guard.ts';
import type { WebhookOutboxStore } from '../../storage/types.ts';
import { errorText } from '../log.ts';
import type { Logger } from '../types.ts';
import { attemptDelivery } from './attempt.ts';
import type { DeliveryKind } from './delivery-kind.ts';

/** Tries under way at once on one instance. */
const MAX_IN_FLIGHT = 16;
/** Beyond the longest try: a claim outlives its try unless the process stalls or dies. */
const LEASE_MARGIN_MS = 60_000;

export interface WebhookDeliveries {
  /** Rows were written: look for due ones now (before start and after close, nothing). */
  wake(): void;
  /** Starts sending the rows of these kinds (by `kind`); rows pending from before go first. */
  start(kinds: Record<string, DeliveryKind>): void;
  /** Stops: tries under way are cut short and their rows put back, due at once, for the next start. */
  close(): Promise<void>;
}

export interface DeliveriesDeps {
  store: WebhookOutboxStore;
  policy: UrlPolicy;
  logger: Logger;
  now: () => number;
  pollIntervalMs: number;
}

export function createWebhookDeliveries(deps: DeliveriesDeps): WebhookDeliveries {
  const { store, logger, now, pollIntervalMs } = deps;
  const owner = crypto.randomUUID();
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let kinds: Record<string, DeliveryKind> | null = null;
  let leaseMs = LEASE_MARGIN_MS;
  let closed = false;
  let passing = false;
  let again = false;
  let pass: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;

  function track(work: Promise<void>): void {
    inFlight.add(work);
    void work.finally(() => {
      inFlight.delete(work);
      wake();
    });
  }

  function attempt(row: Parameters<typeof attemptDelivery>[2]): Promise<void> {
    const kind = kinds?.[row.kind];
    const work = kind
      ? attemptDelivery({ store, owner, policy: deps.policy, logger, now, signal: stopping.signal }, kind, row)
      : // Written by another version of the service: left to an instance that knows it.
        store
          .settleWebhookDelivery(
            row.id,
            { owner, attempts: row.attempts },
            { state: 'pending', next_attempt_at: now() + pollIntervalMs, error: `no sender for ${row.kind}`, untried: true },
          )
          .then(() => undefined);
    return work.catch((err: unknown) => logger.error('webhook delivery failed', { delivery_id: row.id, kind: row.kind, error: errorText(err) }));
  }

  /** One look: claims what there is room for; resolves with when to look next. */
  async function look(): Promise<number> {
    const room = MAX_IN_FLIGHT - inFlight.size;
    if (room <= 0) return pollIntervalMs;
    const at = now();
    const rows = await store.claimWebhookDeliveries({ owner, now: at, lease_ms: leaseMs, limit: room });
    for (const row of rows) track(attempt(row));
    if (rows.length === room) return 0;
    // Due after the claim's `now`, not after this moment: a row falling due in between is looked at again at once.
    const next = await store.nextWebhookAttemptAfter(at);
    return next === null ? pollIntervalMs : Math.min(Math.max(1, next - now()), pollIntervalMs);
  }

  function wake(): void {
    if (closed || kinds === null) return;
    if (passing) {
      again = true;
      return;
    }
    passing = true;
    clearTimeout(timer);
    pass = look()
      .catch((err: unknown) => {
        logger.error('looking for due webhook deliveries failed', { error: errorText(err) });
        return pollIntervalMs;
      })
      .then((delay) => {
        passing = false;
        if (closed) return;
        if (again) {
          again = false;
          return wake();
        }
        timer = setTimeout(wake, delay);
        // A timer must not keep a process alive that has nothing else to do.
        (timer as { unref?: () => void }).unref?.();
      });
  }

  return {
    wake,
    start(given) {
      if (closed || kinds !== null) return;
      kinds = given;
      leaseMs = Math.max(...Object.values(given).map((k) => k.settings.timeoutMs), 0) + LEASE_MARGIN_MS;
      wake();
    },
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      stopping.abort(new DOMException('The service is closing.', 'AbortError'));
      await pass;
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
