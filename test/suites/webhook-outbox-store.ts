// WebhookOutboxStore conformance: rows written pending and due, claims that
// count attempts and hold a row under a lease (exactly one of several
// senders gets it), order per subject and endpoint, settling only by the
// claim's holder, the next due time, retention, and the deliveries a job or
// video task move writes in its own step (none when the move loses).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MetadataStore, NewWebhookDelivery } from '../../storage/types.ts';
import { type MakeStore, newJob, T0, videoTask } from './store-fixtures.ts';

const delivery = (id: string, over: Partial<NewWebhookDelivery> = {}): NewWebhookDelivery => ({
  id,
  event_id: `msg_${id}`,
  kind: 'webhook',
  endpoint: 'https://hooks.example.com/a',
  event_type: 'job.succeeded',
  subject: `job-${id}`,
  seq: 1,
  payload: null,
  created_at: T0,
  ...over,
});

const LEASE = 60_000;

export function webhookOutboxStoreSuite(make: MakeStore<MetadataStore>): void {
  describe('WebhookOutboxStore', () => {
    let store: MetadataStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());
    const claim = (owner: string, now = T0, limit = 10) => store.claimWebhookDeliveries({ owner, now, lease_ms: LEASE, limit });
    const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id).sort();
    const one = async (id: string) => (await store.listWebhookDeliveries({ limit: 100 })).find((r) => r.id === id);

    it('writes rows pending and due at once, keeps the payload, and leaves an existing id alone', async () => {
      const body = JSON.stringify({ type: 'x', big: 2 ** 40 });
      await store.enqueueWebhookDeliveries([delivery('a', { payload: body }), delivery('b', { created_at: T0 + 5 })]);
      await store.enqueueWebhookDeliveries([delivery('a', { endpoint: 'https://other.example.com/' })]);
      await store.enqueueWebhookDeliveries([]);
      expect(await store.listWebhookDeliveries({ limit: 10 })).toEqual([
        {
          ...delivery('a', { payload: body }),
          state: 'pending',
          attempts: 0,
          next_attempt_at: T0,
          claimed_by: null,
          claimed_until: null,
          last_error: null,
          ended_at: null,
        },
        expect.objectContaining({ id: 'b', payload: null, next_attempt_at: T0 + 5 }),
      ]);
      expect(ids(await store.listWebhookDeliveries({ subject: 'job-b', limit: 10 }))).toEqual(['b']);
      expect(await store.listWebhookDeliveries({ limit: 1 })).toHaveLength(1);
    });

    it('claims due rows oldest due first, counting the attempt, and not again while the lease lasts', async () => {
      await store.enqueueWebhookDeliveries([
        delivery('late', { created_at: T0 + 1000 }),
        delivery('b', { created_at: T0 + 1 }),
        delivery('a', { created_at: T0 }),
      ]);
      expect(ids(await claim('s1', T0 - 1))).toEqual([]);
      const first = await claim('s1', T0 + 10, 1);
      expect(first).toEqual([expect.objectContaining({ id: 'a', attempts: 1, claimed_by: 's1', claimed_until: T0 + 10 + LEASE, state: 'pending' })]);
      expect(ids(await claim('s2', T0 + 20))).toEqual(['b']);
      expect(ids(await claim('s2', T0 + 30))).toEqual([]);
      // Lease over (its sender died): another takes the row, as a further attempt.
      const again = await claim('s3', T0 + 10 + LEASE);
      expect(again.find((r) => r.id === 'a')).toMatchObject({ attempts: 2, claimed_by: 's3' });
      expect(ids(again)).toEqual(['a', 'late']);
      expect(await claim('s1', T0, 0)).toEqual([]);
    });

    it('of concurrent claims each row goes to exactly one sender', async () => {
      await store.enqueueWebhookDeliveries(['a', 'b', 'c', 'd', 'e'].map((id) => delivery(id)));
      const got = await Promise.all(['s1', 's2', 's3', 's4'].map((owner) => claim(owner, T0 + 1)));
      expect(
        got
          .flat()
          .map((r) => r.id)
          .sort(),
      ).toEqual(['a', 'b', 'c', 'd', 'e']);
      for (const [i, rows] of got.entries()) for (const r of rows) expect(r).toMatchObject({ attempts: 1, claimed_by: `s${i + 1}` });
    });

    it('sends one subject to one endpoint in seq order: a pending earlier row holds the later ones back', async () => {
      const subject = 'task-1';
      await store.enqueueWebhookDeliveries([
        delivery('third', { subject, seq: 3, created_at: T0 }),
        delivery('first', { subject, seq: 1, created_at: T0 }),
        delivery('second', { subject, seq: 2, created_at: T0 }),
        delivery('elsewhere', { subject, seq: 2, endpoint: 'https://other.example.com/', created_at: T0 }),
        delivery('other-subject', { subject: 'task-2', seq: 5, created_at: T0 }),
      ]);
      const [first] = (await claim('s1', T0 + 1)).filter((r) => r.subject === subject && r.endpoint === 'https://hooks.example.com/a');
      expect(ids(await store.listWebhookDeliveries({ limit: 10 }).then((rs) => rs.filter((r) => r.claimed_by !== null)))).toEqual([
        'elsewhere',
        'first',
        'other-subject',
      ]);
      expect(first.id).toBe('first');
      // Failed, to be retried later: the next state still waits for it.
      expect(
        await store.settleWebhookDelivery('first', { owner: 's1', attempts: 1 }, { state: 'pending', next_attempt_at: T0 + 500, error: 'HTTP 500' }),
      ).toBe(true);
      expect(ids(await claim('s1', T0 + 100))).toEqual([]);
      const retried = await claim('s1', T0 + 500);
      expect(ids(retried)).toEqual(['first']);
      expect(await store.settleWebhookDelivery('first', { owner: 's1', attempts: 2 }, { state: 'delivered', at: T0 + 501 })).toBe(true);
      expect(ids(await claim('s1', T0 + 502))).toEqual(['second']);
      // A row given up does not hold the next one back.
      expect(await store.settleWebhookDelivery('second', { owner: 's1', attempts: 1 }, { state: 'dead', at: T0 + 503, error: 'HTTP 410' })).toBe(
        true,
      );
      expect(ids(await claim('s1', T0 + 504))).toEqual(['third']);
    });

    it('settles only under the claim that took the row, and records each outcome', async () => {
      await store.enqueueWebhookDeliveries([delivery('a'), delivery('b'), delivery('c')]);
      await claim('s1', T0);
      const retry = { state: 'pending', next_attempt_at: T0 + 2 * LEASE, error: 'HTTP 503', payload: '{"built":true}' } as const;
      expect(await store.settleWebhookDelivery('a', { owner: 'other', attempts: 1 }, retry)).toBe(false);
      expect(await store.settleWebhookDelivery('a', { owner: 's1', attempts: 2 }, retry)).toBe(false);
      expect(await store.settleWebhookDelivery('missing', { owner: 's1', attempts: 1 }, retry)).toBe(false);
      expect(await store.settleWebhookDelivery('a', { owner: 's1', attempts: 1 }, retry)).toBe(true);
      expect(await one('a')).toMatchObject({
        state: 'pending',
        attempts: 1,
        next_attempt_at: T0 + 2 * LEASE,
        last_error: 'HTTP 503',
        payload: '{"built":true}',
        claimed_by: null,
        claimed_until: null,
        ended_at: null,
      });
      // Settled once: the same claim cannot settle again.
      expect(await store.settleWebhookDelivery('a', { owner: 's1', attempts: 1 }, { state: 'delivered', at: T0 })).toBe(false);

      expect(await store.settleWebhookDelivery('b', { owner: 's1', attempts: 1 }, { state: 'delivered', at: T0 + 7 })).toBe(true);
      expect(await one('b')).toMatchObject({ state: 'delivered', ended_at: T0 + 7, last_error: null, claimed_by: null, attempts: 1 });
      // A claim that outlived its lease and was taken over cannot settle any more.
      const taken = await claim('s2', T0 + LEASE);
      expect(ids(taken)).toEqual(['c']);
      expect(await store.settleWebhookDelivery('c', { owner: 's1', attempts: 1 }, { state: 'delivered', at: T0 + LEASE })).toBe(false);
      expect(await store.settleWebhookDelivery('c', { owner: 's2', attempts: 2 }, { state: 'dead', at: T0 + LEASE + 1, error: 'refused' })).toBe(
        true,
      );
      expect(await one('c')).toMatchObject({ state: 'dead', ended_at: T0 + LEASE + 1, last_error: 'refused', attempts: 2 });
      expect(ids(await claim('s3', T0 + 10 * LEASE))).toEqual(['a']);
    });

    it('an untried settlement gives the claim back without counting its attempt', async () => {
      await store.enqueueWebhookDeliveries([delivery('a')]);
      expect((await claim('s1', T0))[0].attempts).toBe(1);
      const back = { state: 'pending', next_attempt_at: T0 + 5, error: 'not configured here', untried: true } as const;
      expect(await store.settleWebhookDelivery('a', { owner: 's1', attempts: 1 }, back)).toBe(true);
      expect(await one('a')).toMatchObject({
        state: 'pending',
        attempts: 0,
        next_attempt_at: T0 + 5,
        claimed_by: null,
        last_error: 'not configured here',
      });
      expect(await store.settleWebhookDelivery('a', { owner: 's1', attempts: 1 }, back)).toBe(false);
      const [again] = await claim('s2', T0 + 5);
      expect(again).toMatchObject({ id: 'a', attempts: 1, claimed_by: 's2' });
    });

    it('says when the next pending row falls due after now', async () => {
      expect(await store.nextWebhookAttemptAfter(T0)).toBeNull();
      await store.enqueueWebhookDeliveries([
        delivery('now'),
        delivery('later', { created_at: T0 + 300 }),
        delivery('soon', { created_at: T0 + 100 }),
      ]);
      expect(await store.nextWebhookAttemptAfter(T0)).toBe(T0 + 100);
      expect(await store.nextWebhookAttemptAfter(T0 + 100)).toBe(T0 + 300);
      await claim('s1', T0 + 300);
      for (const id of ['now', 'soon']) await store.settleWebhookDelivery(id, { owner: 's1', attempts: 1 }, { state: 'delivered', at: T0 + 300 });
      await store.settleWebhookDelivery('later', { owner: 's1', attempts: 1 }, { state: 'pending', next_attempt_at: T0 + 9000, error: 'x' });
      expect(await store.nextWebhookAttemptAfter(T0 + 300)).toBe(T0 + 9000);
      expect(await store.nextWebhookAttemptAfter(T0 + 9000)).toBeNull();
    });

    it('deletes ended rows past their retention, in batches, never a pending one', async () => {
      await store.enqueueWebhookDeliveries(['a', 'b', 'c', 'd'].map((id) => delivery(id)));
      await claim('s1', T0);
      await store.settleWebhookDelivery('a', { owner: 's1', attempts: 1 }, { state: 'delivered', at: T0 + 10 });
      await store.settleWebhookDelivery('b', { owner: 's1', attempts: 1 }, { state: 'dead', at: T0 + 20, error: 'x' });
      await store.settleWebhookDelivery('c', { owner: 's1', attempts: 1 }, { state: 'delivered', at: T0 + 30 });
      await store.settleWebhookDelivery('d', { owner: 's1', attempts: 1 }, { state: 'pending', next_attempt_at: T0, error: 'x' });
      expect(await store.deleteEndedWebhookDeliveries(T0 + 20, 1)).toBe(1);
      expect(await store.deleteEndedWebhookDeliveries(T0 + 20, 10)).toBe(1);
      expect(await store.deleteEndedWebhookDeliveries(T0 + 20, 10)).toBe(0);
      expect(ids(await store.listWebhookDeliveries({ limit: 10 }))).toEqual(['c', 'd']);
      expect(await store.deleteEndedWebhookDeliveries(T0 + 10_000, 10)).toBe(1);
      expect(ids(await store.listWebhookDeliveries({ limit: 10 }))).toEqual(['d']);
    });

    it("a job's move writes its deliveries with it, and none when another writer moved the job first", async () => {
      await store.createJob(newJob('j1'));
      await store.transitionJob('j1', 'queued', 'running', { started_at: T0 });
      const rows = [delivery('d1', { subject: 'j1' }), delivery('d2', { subject: 'j1', endpoint: 'https://b.example.com/' })];
      expect(await store.transitionJob('j1', 'queued', 'canceled', { completed_at: T0, outbox: [delivery('lost', { subject: 'j1' })] })).toBeNull();
      expect(await store.transitionJob('j1', 'running', 'succeeded', { completed_at: T0 + 1, outbox: rows })).toMatchObject({
        id: 'j1',
        status: 'succeeded',
      });
      expect(await store.getJobById('j1')).toMatchObject({ status: 'succeeded', completed_at: T0 + 1 });
      expect(ids(await store.listWebhookDeliveries({ subject: 'j1', limit: 10 }))).toEqual(['d1', 'd2']);
      // An empty list is no deliveries, and the move still happens.
      expect(await store.transitionJob('j1', 'succeeded', 'expired', { outbox: [] })).toMatchObject({ id: 'j1', status: 'expired' });
      expect(ids(await store.listWebhookDeliveries({ subject: 'j1', limit: 10 }))).toEqual(['d1', 'd2']);
    });

    it('of concurrent moves of a job from one status exactly one writes its deliveries', async () => {
      await store.createJob(newJob('j2'));
      const moves = await Promise.all(
        ['a', 'b', 'c'].map((n) =>
          store.transitionJob('j2', 'queued', 'canceled', { completed_at: T0, outbox: [delivery(`race-${n}`, { subject: 'j2' })] }),
        ),
      );
      expect(moves.filter(Boolean)).toHaveLength(1);
      expect(ids(await store.listWebhookDeliveries({ subject: 'j2', limit: 10 }))).toEqual([`race-${'abc'[moves.findIndex(Boolean)]}`]);
    });

    it("a video task's change writes its callback with it, and none when the change loses", async () => {
      await store.createVideoTask(videoTask('t1'));
      const row = (id: string) => delivery(id, { kind: 'video_callback', subject: 't1', event_type: 'queueing', payload: '{"state":"queueing"}' });
      expect(await store.transitionVideoTask('t1', 'queueing', 'processing', { updated_at: 2000, outbox: [row('lost')] })).toBe(false);
      expect(await store.transitionVideoTask('t1', 'created', 'queueing', { updated_at: 2000, outbox: [row('won')] })).toBe(true);
      expect(await store.getVideoTask('acct', 't1')).toEqual(videoTask('t1', { state: 'queueing', updated_at: 2000 }));
      expect(await store.listWebhookDeliveries({ subject: 't1', limit: 10 })).toEqual([
        expect.objectContaining({ id: 'won', kind: 'video_callback', payload: '{"state":"queueing"}', state: 'pending' }),
      ]);
    });
  });
}
