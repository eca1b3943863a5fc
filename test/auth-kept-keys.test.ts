// API keys on SQLite (core/auth.ts): a key's account is looked up once and
// reused while the store's commit mark stays put, and looked up again once
// anything is committed anywhere. What a user relies on stays true: a key
// another instance no longer lists (it started with another configuration,
// which replaces the stored keys) stops working here at the next request, and
// a key its configuration adds starts working here. Each test runs in process
// and through a real Node server.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { enc, expectEnvelope, upload } from './helpers/assets.ts';
import { MODES, startHarness } from './helpers/harness.ts';
import { until } from './helpers/jobs.ts';
import { startPeer } from './helpers/peer-service.ts';
import { recordingDatabase } from './helpers/recording-sqlite.ts';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

describe.each(MODES)('API keys looked up between commits (%s)', (mode) => {
  async function start() {
    let ran: string[] = [];
    const h = await startHarness(mode, { accounts: [{ id: 'alice', apiKeys: ['key-alice'] }] }, (blobs, dir) => {
      const recording = recordingDatabase(join(dir, 'graphrun.db'));
      ran = recording.ran;
      return createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs, database: recording.db });
    });
    closers.push(() => h.close());
    // An asset of alice's to read.
    const uploaded = await upload(h, enc('an asset'), {}, bearer('key-alice'));
    expect(uploaded.res.status).toBe(201);
    /** GET of alice's asset with `key`: the status, and whether the request read the stored keys. */
    const list = async (key: string) => {
      const from = ran.length;
      const res = await h.fetch(`/api/v2/assets/${uploaded.body.id}`, { headers: bearer(key) });
      await res.arrayBuffer();
      return { status: res.status, lookedUp: ran.slice(from).some((sql) => /\bfrom "api_keys"/.test(sql)) };
    };
    return { h, list };
  }

  it("reuses a key's account while nothing is committed, and looks it up again after a commit", async () => {
    const { h, list } = await start();
    // The upload's commit came after its own lookup.
    expect(await list('key-alice')).toEqual({ status: 200, lookedUp: true });
    // Once what the start left behind is committed, nothing moves: the key is not looked up again.
    await until('a request that did not look its key up', async () => !(await list('key-alice')).lookedUp, 10_000);
    expect(await list('key-alice')).toEqual({ status: 200, lookedUp: false });
    // A write of its own (an upload) moves the mark: the next request looks the key up again.
    const { res } = await upload(h, enc('a write'), {}, bearer('key-alice'));
    expect(res.status).toBe(201);
    expect(await list('key-alice')).toEqual({ status: 200, lookedUp: true });
    await until('a request that did not look its key up', async () => !(await list('key-alice')).lookedUp, 10_000);
    // A key nobody has: refused every time, in the v2 envelope.
    for (let i = 0; i < 2; i++) {
      await expectEnvelope(
        await h.fetch('/api/v2/assets/00000000-0000-4000-8000-000000000000', { headers: bearer('key-mallory') }),
        401,
        'unauthorized',
      );
    }
  });

  it('a key another instance no longer lists stops working here, and the key it adds starts', async () => {
    const { h, list } = await start();
    expect((await list('key-alice')).status).toBe(200);
    await until('a request that did not look its key up', async () => !(await list('key-alice')).lookedUp, 10_000);
    await expectEnvelope(
      await h.fetch('/api/v2/assets/00000000-0000-4000-8000-000000000000', { headers: bearer('key-alice-2') }),
      401,
      'unauthorized',
    );

    // The peer's configuration is the whole truth for the stored keys: alice's key is now key-alice-2.
    const peer = await startPeer(h, { runJobs: false, accounts: [{ id: 'alice', apiKeys: ['key-alice-2'] }] });
    closers.push(() => peer.close());
    await expectEnvelope(await h.fetch('/api/v2/assets/00000000-0000-4000-8000-000000000000', { headers: bearer('key-alice') }), 401, 'unauthorized');
    expect((await list('key-alice-2')).status).toBe(200);
  });
});
