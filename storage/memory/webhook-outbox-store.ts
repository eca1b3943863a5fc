// In-process WebhookOutboxStore over a map, composed into the memory metadata
// store. Each method checks and writes with no await in between, so on one
// event loop a claim is a compare-and-set, as the SQL store's UPDATE is.
// `add` is for the job and video task stores beside it: their moves write
// their deliveries in the same step.
import type { NewWebhookDelivery, WebhookDelivery, WebhookOutboxStore } from '../types.ts';

const copy = (row: WebhookDelivery): WebhookDelivery => ({ ...row });
const byDue = (a: WebhookDelivery, b: WebhookDelivery) =>
  a.next_attempt_at - b.next_attempt_at || a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const byAge = (a: WebhookDelivery, b: WebhookDelivery) => a.created_at - b.created_at || a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function createMemoryWebhookOutboxStore(): WebhookOutboxStore & { add(rows: readonly NewWebhookDelivery[]): void } {
  const rows = new Map<string, WebhookDelivery>();

  function add(news: readonly NewWebhookDelivery[]): void {
    for (const r of news) {
      if (rows.has(r.id)) continue;
      rows.set(r.id, {
        ...r,
        state: 'pending',
        attempts: 0,
        next_attempt_at: r.created_at,
        claimed_by: null,
        claimed_until: null,
        last_error: null,
        ended_at: null,
      });
    }
  }

  /** An earlier pending row of the same subject and endpoint holds this one back. */
  const waiting = (row: WebhookDelivery) => {
    for (const other of rows.values()) {
      if (other.state === 'pending' && other.subject === row.subject && other.endpoint === row.endpoint && other.seq < row.seq) return true;
    }
    return false;
  };

  return {
    add,
    async enqueueWebhookDeliveries(news) {
      add(news);
    },
    async claimWebhookDeliveries({ owner, now, lease_ms, limit }) {
      if (limit <= 0) return [];
      const due = [...rows.values()]
        .filter((r) => r.state === 'pending' && r.next_attempt_at <= now && (r.claimed_until === null || r.claimed_until <= now) && !waiting(r))
        .sort(byDue)
        .slice(0, limit);
      for (const r of due) Object.assign(r, { attempts: r.attempts + 1, claimed_by: owner, claimed_until: now + lease_ms });
      return due.map(copy);
    },
    async settleWebhookDelivery(id, { owner, attempts }, outcome) {
      const row = rows.get(id);
      if (row?.state !== 'pending' || row.claimed_by !== owner || row.attempts !== attempts) return false;
      Object.assign(row, { claimed_by: null, claimed_until: null });
      if (outcome.state === 'pending') {
        Object.assign(row, { next_attempt_at: outcome.next_attempt_at, last_error: outcome.error });
        if (outcome.payload !== undefined) row.payload = outcome.payload;
        if (outcome.untried === true) row.attempts = attempts - 1;
      } else {
        Object.assign(row, { state: outcome.state, ended_at: outcome.at, last_error: outcome.state === 'dead' ? outcome.error : null });
      }
      return true;
    },
    async nextWebhookAttemptAfter(now) {
      let next: number | null = null;
      for (const r of rows.values()) {
        if (r.state === 'pending' && r.next_attempt_at > now && (next === null || r.next_attempt_at < next)) next = r.next_attempt_at;
      }
      return next;
    },
    async listWebhookDeliveries({ subject, limit }) {
      return [...rows.values()]
        .filter((r) => subject === undefined || r.subject === subject)
        .sort(byAge)
        .slice(0, limit)
        .map(copy);
    },
    async deleteEndedWebhookDeliveries(before, limit) {
      const ended = [...rows.values()].filter((r) => r.state !== 'pending' && r.ended_at !== null && r.ended_at <= before).slice(0, limit);
      for (const r of ended) rows.delete(r.id);
      return ended.length;
    },
  };
}
