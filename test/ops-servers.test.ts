// /ops/servers over HTTP, in process and through a real server: who may read
// and change the set (401 without or with a wrong operator token, 403 when
// the service has none, 409 for an engine without a pool), bad URLs (400),
// unknown ids (404), and what each change does to jobs on fake engine
// servers: an added server runs jobs, a draining one finishes its job and
// takes no new one, a removed one's job runs again elsewhere.
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { MODES, startHarness } from './helpers/harness.ts';
import { submitOk, until, waitForJob } from './helpers/jobs.ts';
import { addBody, type FakePool, OPERATOR, type PoolService, poolJob, startFakePool, startPoolService } from './helpers/server-pool.ts';

let pool: FakePool | undefined;
let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
  await pool?.close();
  pool = undefined;
});

describe.each(MODES)('/ops/servers (%s)', (mode) => {
  async function start(opts: Parameters<typeof startPoolService>[1] = {}): Promise<PoolService> {
    pool ??= await startFakePool(2);
    const s = await startPoolService(mode, opts);
    closers.push(() => s.close());
    return s;
  }
  const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });

  it('refuses without or with a wrong operator token (401), and changes nothing without one configured (403)', async () => {
    const s = await start();
    const url = pool!.workers[0].url;
    for (const token of [null, 'wrong']) {
      expect((await s.ops('/ops/servers', { token })).status).toBe(401);
      const res = await s.ops('/ops/servers', { ...addBody(url), token });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(((await res.json()) as any).error.code).toBe('unauthorized');
    }
    const open = await start({ service: { operatorToken: undefined } });
    expect(await json(await open.ops('/ops/servers', { token: null }))).toEqual({ status: 200, body: { servers: [], configured: [] } });
    const refused = await json(await open.ops('/ops/servers', { ...addBody(url), token: null }));
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'forbidden', message: expect.stringMatching(/--operator-token/) } } });
    for (const [method, path] of [
      ['POST', '/ops/servers/x/drain'],
      ['DELETE', '/ops/servers/x'],
    ]) {
      expect((await open.ops(path, { method, token: null })).status).toBe(403);
    }
    expect(s.engine.servers()).toEqual([]);
  });

  it('an engine without a pool: 409 no_server_pool; the list is empty', async () => {
    const h = await startHarness(mode, { engine: createLocalEngine(), operatorToken: OPERATOR });
    closers.push(() => h.close());
    const auth = { authorization: `Bearer ${OPERATOR}` };
    const res = await json(
      await h.fetch('/ops/servers', { ...addBody('http://gpu-1:8188'), headers: { ...auth, 'content-type': 'application/json' } }),
    );
    expect(res).toMatchObject({ status: 409, body: { error: { code: 'no_server_pool', message: expect.stringMatching(/--worker/) } } });
    expect((await json(await h.fetch('/ops/servers', { headers: auth }))).body).toEqual({ servers: [], configured: [] });
  });

  it('bad URLs are 400 with the reason; unknown ids are 404', async () => {
    const s = await start();
    const bad = {
      missing: undefined,
      'not a URL': 'gpu-1:8188/x y',
      'not http or https': 'ftp://gpu-1',
      credentials: 'http://u:p@gpu-1:8188',
      query: 'http://gpu-1:8188/?a=1',
    };
    for (const [reason, url] of Object.entries(bad)) {
      const res = await json(await s.ops('/ops/servers', addBody(url)));
      expect(res, reason).toMatchObject({ status: 400, body: { error: { code: 'malformed_request', details: { field: 'url' } } } });
    }
    expect((await s.ops('/ops/servers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })).status).toBe(400);
    const id = crypto.randomUUID();
    expect(await json(await s.ops(`/ops/servers/${id}/drain`, { method: 'POST' }))).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    expect((await s.ops(`/ops/servers/${id}`, { method: 'DELETE' })).status).toBe(404);
    expect(s.engine.servers()).toEqual([]);
  });

  it('an added server runs jobs; adding it again returns it (200); the list merges the live view', async () => {
    const s = await start({ configured: [] });
    const [w0] = pool!.workers;
    const added = await json(await s.ops('/ops/servers', addBody(`${w0.url}/`)));
    expect(added).toEqual({
      status: 201,
      body: {
        id: expect.any(String),
        deployment: 'default',
        url: w0.url,
        state: 'active',
        created_at: expect.any(String),
        updated_at: expect.any(String),
        live: expect.objectContaining({ state: 'active', busy: 0 }),
      },
    });
    const again = await json(await s.ops('/ops/servers', addBody(w0.url)));
    expect(again).toMatchObject({ status: 200, body: { id: added.body.id } });
    const job = await submitOk(s, poolJob(1));
    await waitForJob(s, job.id, 'succeeded', 5000);
    expect(pool!.ran(w0)).toEqual([job.id]);
    const list = await json(await s.ops('/ops/servers'));
    expect(list.body).toEqual({ servers: [{ ...added.body, live: expect.objectContaining({ healthy: true, state: 'active' }) }], configured: [] });
  });

  it('a configured server that is not registered is listed apart and stays', async () => {
    pool ??= await startFakePool(2);
    const [w0, w1] = pool.workers;
    const s = await start({ configured: [w1.url] });
    const id = (await json(await s.ops('/ops/servers', addBody(w0.url)))).body.id;
    const list = (await json(await s.ops('/ops/servers'))).body;
    expect(list.servers.map((x: { url: string }) => x.url)).toEqual([w0.url]);
    expect(list.configured).toEqual([expect.objectContaining({ url: w1.url, state: 'active' })]);
    expect((await s.ops(`/ops/servers/${id}`, { method: 'DELETE' })).status).toBe(204);
    await s.service.idle();
    expect(s.engine.servers().map((x) => x.url)).toEqual([w1.url]);
  });

  it('drain: the running job finishes there, no new job goes there; add makes it active again; remove', async () => {
    const s = await start();
    const ids = [];
    for (const w of pool!.workers) ids.push((await json(await s.ops('/ops/servers', addBody(w.url)))).body.id);
    await until('both servers ready', () => s.engine.servers().every((x) => x.healthy && !x.warming), 5000);
    for (const g of pool!.gates) g.hold();
    const first = await submitOk(s, poolJob(10));
    await until('the first job running', () => pool!.runningOn(first.id) !== undefined, 5000);
    const busy = pool!.runningOn(first.id)!;
    const i = pool!.workers.indexOf(busy);
    const other = pool!.workers[1 - i];
    pool!.gates[1 - i].open();
    const drained = await json(await s.ops(`/ops/servers/${ids[i]}/drain`, { method: 'POST' }));
    expect(drained).toMatchObject({ status: 202, body: { id: ids[i], state: 'draining', live: { state: 'draining', busy: 1 } } });
    const more = [];
    for (let k = 0; k < 3; k++) more.push(await submitOk(s, poolJob(11 + k)));
    for (const j of more) await waitForJob(s, j.id, 'succeeded', 5000);
    expect(pool!.ran(other)).toEqual(more.map((j) => j.id));
    pool!.gates[i].open();
    await waitForJob(s, first.id, 'succeeded', 5000);
    expect(pool!.ran(busy)).toEqual([first.id]);
    // Adding a draining server's URL makes it active again.
    expect(await json(await s.ops('/ops/servers', addBody(busy.url)))).toMatchObject({ status: 200, body: { id: ids[i], state: 'active' } });
    expect((await s.ops(`/ops/servers/${ids[i]}`, { method: 'DELETE' })).status).toBe(204);
    expect((await s.ops(`/ops/servers/${ids[i]}`, { method: 'DELETE' })).status).toBe(404);
    expect(s.engine.servers().map((x) => x.url)).toEqual([other.url]);
    expect((await json(await s.ops('/ops/servers'))).body.servers.map((x: { id: string }) => x.id)).toEqual([ids[1 - i]]);
  });

  it('remove: a job running on the removed server runs again on another', async () => {
    const s = await start();
    const ids = [];
    for (const w of pool!.workers) ids.push((await json(await s.ops('/ops/servers', addBody(w.url)))).body.id);
    await until('both servers ready', () => s.engine.servers().every((x) => x.healthy && !x.warming), 5000);
    for (const g of pool!.gates) g.hold();
    const job = await submitOk(s, poolJob(20));
    await until('the job running', () => pool!.runningOn(job.id) !== undefined, 5000);
    const i = pool!.workers.indexOf(pool!.runningOn(job.id)!);
    pool!.gates[1 - i].open();
    expect((await s.ops(`/ops/servers/${ids[i]}`, { method: 'DELETE' })).status).toBe(204);
    await waitForJob(s, job.id, 'succeeded', 5000);
    expect(pool!.ran(pool!.workers[1 - i])).toEqual([job.id]);
  });
});
