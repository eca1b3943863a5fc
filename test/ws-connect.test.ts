// `/ws` connection handling through a real Node server and a real `ws`
// client: the key as the token query parameter or an X-API-Key or
// Authorization header on the upgrade (401 in the cloud shape when refused),
// `clientId` as `sid`, the greeting `status`, both paths, the feature_flags
// exchange, and refusals of bad upgrades.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from './helpers/harness.ts';
import { cancelJob, submitOk, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';
import { connectWs, refusedUpgrade, wsUrl } from './helpers/ws-client.ts';
import { ALICE, BOB, startWsHarness, type WsHarness } from './helpers/ws-harness.ts';

let h: WsHarness;
beforeAll(async () => {
  h = await startWsHarness();
});
afterAll(() => h.close());

describe('ws connect', () => {
  it('greets with status {status: {exec_info: {queue_remaining}}, sid} where sid is the clientId', async () => {
    const c = await connectWs(h.base, { token: ALICE.key, clientId: 'my-client-1' });
    const first = await c.waitFor('status', (f) => f.kind === 'text');
    expect(first).toEqual({ kind: 'text', type: 'status', data: { status: { exec_info: { queue_remaining: 0 } }, sid: 'my-client-1' } });
    await c.close();
  });

  it('makes up a sid (uuid hex) when no clientId is given; /api/ws is the same endpoint', async () => {
    for (const path of ['/ws', '/api/ws', '/ws/']) {
      const c = await connectWs(h.base, { token: ALICE.key }, path);
      const first = await c.waitFor('status', (f) => f.kind === 'text');
      expect(first.kind === 'text' && first.type).toBe('status');
      expect(first.kind === 'text' && first.data.sid).toMatch(/^[0-9a-f]{32}$/);
      await c.close();
    }
  });

  it('counts the account’s queued and running jobs in queue_remaining, and only its own', async () => {
    const alice = h.as(ALICE.key);
    // Jobs that run until canceled, so both still count when the clients connect, however slow the machine.
    const jobs = [await submitOk(alice, waitWorkflow(1, 600_000)), await submitOk(alice, waitWorkflow(2, 600_000))];
    const a = await connectWs(h.base, { token: ALICE.key });
    const b = await connectWs(h.base, { token: BOB.key });
    const greet = async (c: typeof a) => ((await c.waitFor('status', (f) => f.kind === 'text')) as any).data.status.exec_info.queue_remaining;
    expect(await greet(a)).toBe(2);
    expect(await greet(b)).toBe(0);
    for (const job of jobs) {
      await cancelJob(alice, job.id);
      await waitForJob(alice, job.id, 'canceled');
    }
    // Each change is announced; the last one says the queue is empty.
    await a.waitFor(
      'status 0',
      (f) => f.kind === 'text' && f.type === 'status' && f.data.status.exec_info.queue_remaining === 0 && !('sid' in f.data),
    );
    await a.close();
    await b.close();
  });

  it('answers a feature_flags message with its own flags', async () => {
    const c = await connectWs(h.base, { token: ALICE.key });
    c.send({ type: 'feature_flags', data: { supports_preview_metadata: true } });
    const reply = await c.waitFor('feature_flags', (f) => f.kind === 'text' && f.type === 'feature_flags');
    expect(reply).toEqual({ kind: 'text', type: 'feature_flags', data: { supports_preview_metadata: true, max_upload_size: 110 * 1024 * 1024 } });
    // What it cannot parse, or does not know, it ignores; the connection stays.
    c.send('not json');
    c.send({ type: 'something_else' });
    c.ws.send(new Uint8Array([1, 2, 3]));
    c.send({ type: 'feature_flags', data: 'nope' });
    await c.waitFor('second feature_flags', (f) => f.kind === 'text' && f.type === 'feature_flags', 5000, c.frames.indexOf(reply) + 1);
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    await c.close();
  });

  it('refuses a missing or wrong token with 401 in the cloud {code, message} shape', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /token query parameter/],
      [{ token: '' }, /token query parameter/],
      [{ token: 'wrong' }, /not valid/],
    ];
    for (const [query, message] of cases) {
      const res = await refusedUpgrade(wsUrl(h.base, '/ws', query));
      expect(res.status).toBe(401);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'message']);
      expect(res.body.code).toBe('unauthorized');
      expect(res.body.message).toMatch(message);
    }
  });

  it('takes the key from an X-API-Key or "Authorization: Bearer" header on the upgrade, the token query parameter first', async () => {
    const alice = h.as(ALICE.key);
    // A job that runs until canceled: the greeting's count says whose connection it is.
    const job = await submitOk(alice, waitWorkflow(3, 600_000));
    const remaining = async (c: Awaited<ReturnType<typeof connectWs>>) => {
      const first = (await c.waitFor('status', (f) => f.kind === 'text')) as any;
      await c.close();
      return first.data.status.exec_info.queue_remaining;
    };
    try {
      const ways: Array<[string, Record<string, string>, Record<string, string>, number]> = [
        ['X-API-Key', {}, { 'x-api-key': ALICE.key }, 1],
        ['Bearer', {}, { authorization: `Bearer ${ALICE.key}` }, 1],
        ['X-API-Key over Authorization', {}, { 'x-api-key': BOB.key, authorization: `Bearer ${ALICE.key}` }, 0],
        ['the query over the headers', { token: ALICE.key }, { 'x-api-key': BOB.key }, 1],
        ['an empty query token is none', { token: '' }, { 'x-api-key': ALICE.key }, 1],
      ];
      for (const [way, query, headers, count] of ways)
        expect([way, await remaining(await connectWs(h.base, query, '/ws', headers))]).toEqual([way, count]);
      const refusals: Array<[Record<string, string>, Record<string, string>, RegExp]> = [
        [{}, { 'x-api-key': 'wrong' }, /not valid/],
        [{}, { authorization: 'Bearer wrong' }, /not valid/],
        [{}, { authorization: `Basic ${btoa(`u:${ALICE.key}`)}` }, /Bearer/],
        // A wrong query token is not rescued by a right header.
        [{ token: 'wrong' }, { 'x-api-key': ALICE.key }, /not valid/],
      ];
      for (const [query, headers, message] of refusals) {
        const res = await refusedUpgrade(wsUrl(h.base, '/ws', query), headers);
        expect({ status: res.status, body: res.body }).toEqual({
          status: 401,
          body: { code: 'unauthorized', message: expect.stringMatching(message) },
        });
      }
    } finally {
      await cancelJob(alice, job.id);
      await waitForJob(alice, job.id, 'canceled');
    }
  });

  it('refuses other paths with 404 and an over-long clientId with 400', async () => {
    const missing = await refusedUpgrade(wsUrl(h.base, '/api/v2/ws', { token: ALICE.key }));
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
    const long = await refusedUpgrade(wsUrl(h.base, '/ws', { token: ALICE.key, clientId: 'x'.repeat(257) }));
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ code: 'invalid_request', message: expect.stringContaining('clientId') });
  });

  it('needs no token on an open deployment (no accounts, no token configured)', async () => {
    const open = await startHarness('node-server');
    try {
      const c = await connectWs(open.base, { clientId: 'anon' });
      const first = await c.waitFor('status', (f) => f.kind === 'text');
      expect(first.kind === 'text' && first.data.sid).toBe('anon');
      await c.close();
    } finally {
      await open.close();
    }
  });
});
