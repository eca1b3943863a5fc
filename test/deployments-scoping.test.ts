// Deployments behind one gateway share nothing: each is a service on its own
// storage, so a job or an asset made on one is 404 on another and on the
// fallback, listings (v2 jobs, cloud queue and history) show only their
// own, a v2 event stream or a /ws client hears only its own deployment's
// jobs. In process and through a real server (the /ws cases: a real server).
import { afterEach, describe, expect, it } from 'vitest';
import { type GatewayHarness, holdWorkflow, quickWorkflow, startGateway } from './helpers/deployments.ts';
import { MODES, uploadForm } from './helpers/harness.ts';
import { getJob, submitOk, waitForJob } from './helpers/jobs.ts';
import { eventsOf, openEvents } from './helpers/sse-client.ts';
import { connectWs, type Frame, refusedUpgrade } from './helpers/ws-client.ts';

const open: GatewayHarness[] = [];
afterEach(async () => {
  for (const g of open.splice(0).reverse()) await g.close();
});

async function gateway(mode: (typeof MODES)[number]): Promise<GatewayHarness> {
  const g = await startGateway(mode, { deployments: [{ id: 'default' }, { id: 'sdxl' }, { id: 'other' }] });
  open.push(g);
  return g;
}

const json = async (res: Response) => {
  expect(res.status).toBe(200);
  return (await res.json()) as any;
};

describe.each(MODES)('deployment scoping (%s)', (mode) => {
  it('a job and an asset made on A are 404 on B and on the fallback', async () => {
    const g = await gateway(mode);
    const a = g.at({ host: 'sdxl' });
    const job = await submitOk(a, quickWorkflow(7));
    const up = await a.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('only on sdxl') });
    const asset: any = await up.json();
    expect(up.status).toBe(201);
    await waitForJob(a, job.id, 'succeeded', 15_000);

    for (const elsewhere of [g.at({ host: 'other' }), g.at({ path: 'other' }), g.at('none')]) {
      expect((await getJob(elsewhere, job.id)).res.status).toBe(404);
      const r = await elsewhere.fetch(`/api/v2/assets/${asset.id}`);
      expect(r.status).toBe(404);
      await r.body?.cancel();
      const cloud = await elsewhere.fetch(`/api/job/${job.id}/status`);
      expect(cloud.status).toBe(404);
      await cloud.body?.cancel();
      const history = await json(await elsewhere.fetch(`/api/history/${job.id}`));
      expect(history).toEqual({});
    }
    // On A itself, all there.
    expect((await a.fetch(`/api/v2/assets/${asset.id}`)).status).toBe(200);
    expect(Object.keys(await json(await a.fetch(`/api/history/${job.id}`)))).toEqual([job.id]);
  });

  it('listings of B show none of A’s jobs: v2 jobs, cloud queue (running and pending) and history', async () => {
    const g = await gateway(mode);
    const a = g.at({ host: 'sdxl' });
    const b = g.at({ path: 'other' });
    const { holds } = g.deployments.sdxl!.engine;
    const running = await submitOk(a, holdWorkflow('a-running'));
    await holds.started('a-running');
    // One job at a time for the local account: this one waits behind the first.
    const pending = await submitOk(a, holdWorkflow('a-pending'));
    const own = await submitOk(b, quickWorkflow(3));
    await waitForJob(b, own.id, 'succeeded', 15_000);

    const queueA = JSON.stringify(await json(await a.fetch('/api/queue')));
    expect(queueA).toContain(running.id);
    expect(queueA).toContain(pending.id);
    const queueB = JSON.stringify(await json(await b.fetch('/api/queue')));
    expect(queueB).not.toContain(running.id);
    expect(queueB).not.toContain(pending.id);

    const listB = await json(await b.fetch('/api/v2/jobs'));
    expect(listB.jobs.map((j: any) => j.id)).toEqual([own.id]);
    const listA = await json(await a.fetch('/api/v2/jobs'));
    expect(listA.jobs.map((j: any) => j.id).sort()).toEqual([running.id, pending.id].sort());

    holds.release('a-running');
    holds.release('a-pending');
    await waitForJob(a, running.id, 'succeeded', 15_000);
    await waitForJob(a, pending.id, 'succeeded', 15_000);
    const historyA = await json(await a.fetch('/api/history'));
    expect(Object.keys(historyA).sort()).toEqual([running.id, pending.id].sort());
    const historyB = await json(await b.fetch('/api/history'));
    expect(Object.keys(historyB)).toEqual([own.id]);
    const historyFallback = await json(await g.at('none').fetch('/api/history'));
    expect(historyFallback).toEqual({});
    const listFallback = await json(await g.at('none').fetch('/api/v2/jobs'));
    expect(listFallback.jobs).toEqual([]);
  });

  it('v2 event streams: A’s stream hears A’s job to its end; B cannot open it, and B’s own stream carries only B’s job', async () => {
    const g = await gateway(mode);
    const a = g.at({ host: 'sdxl' });
    const b = g.at({ path: 'other' });
    const jobA = await submitOk(a, holdWorkflow('sse-a'));
    const jobB = await submitOk(b, holdWorkflow('sse-b'));
    const streamA = await openEvents(a, jobA.id);
    expect(streamA.res.status).toBe(200);
    const onB = await openEvents(b, jobA.id);
    expect(onB.res.status).toBe(404);
    await onB.res.body?.cancel();
    const streamB = await openEvents(b, jobB.id);
    expect(streamB.res.status).toBe(200);

    g.deployments.sdxl!.engine.holds.release('sse-a');
    const eventsA = eventsOf(await streamA.sse!.readToEnd(15_000));
    expect(eventsA.at(-1)).toMatchObject({ event: 'status', json: { id: jobA.id, status: 'succeeded' } });

    g.deployments.other!.engine.holds.release('sse-b');
    const itemsB = await streamB.sse!.readToEnd(15_000);
    const eventsB = eventsOf(itemsB);
    expect(eventsB.at(-1)).toMatchObject({ event: 'status', json: { id: jobB.id, status: 'succeeded' } });
    expect(JSON.stringify(itemsB)).not.toContain(jobA.id);
    expect(JSON.stringify(eventsA)).not.toContain(jobB.id);
  });
});

const ended = (id: string) => (f: Frame) => f.kind === 'text' && f.type === 'executing' && f.data.prompt_id === id && f.data.node === null;
const everything = (frames: Frame[]) => frames.map((f) => (f.kind === 'text' ? JSON.stringify(f) : `binary:${f.type}`)).join('\n');

describe('deployment scoping of /ws (node-server)', () => {
  it('a /ws client on B hears nothing of A’s job while one on A does (by host and by path)', async () => {
    const g = await gateway('node-server');
    const root = `http://127.0.0.1:${g.port}`;
    const onA = await connectWs(root, { clientId: 'client-a' }, '/ws', { host: `sdxl.run.example.com:${g.port}` });
    const onB = await connectWs(root, { clientId: 'client-b' }, '/deployment/other/ws');
    const onFallback = await connectWs(root, { clientId: 'client-f' }, '/ws');
    try {
      // Each is greeted by its own deployment.
      for (const c of [onA, onB, onFallback]) await c.waitFor('status', (f) => f.kind === 'text' && f.type === 'status', 10_000);
      const a = g.at({ host: 'sdxl' });
      const b = g.at({ path: 'other' });
      const jobA = await submitOk(a, quickWorkflow(11));
      await onA.waitFor('A job end', ended(jobA.id), 15_000);
      // A later job on B and on the fallback: once their ends have arrived, anything misrouted of A's would have too.
      const jobB = await submitOk(b, quickWorkflow(12));
      await onB.waitFor('B job end', ended(jobB.id), 15_000);
      const jobF = await submitOk(g.at('none'), quickWorkflow(13));
      await onFallback.waitFor('fallback job end', ended(jobF.id), 15_000);
      await waitForJob(a, jobA.id, 'succeeded', 15_000);

      expect(everything(onA.frames)).toContain(jobA.id);
      expect(everything(onA.frames)).not.toContain(jobB.id);
      expect(everything(onA.frames)).not.toContain(jobF.id);
      expect(everything(onB.frames)).not.toContain(jobA.id);
      expect(everything(onB.frames)).not.toContain(jobF.id);
      expect(everything(onFallback.frames)).not.toContain(jobA.id);
      expect(everything(onFallback.frames)).not.toContain(jobB.id);
    } finally {
      await onA.close();
      await onB.close();
      await onFallback.close();
    }
  });

  it('a /ws upgrade naming a deployment nobody has is refused with 404', async () => {
    const g = await gateway('node-server');
    const byPath = await refusedUpgrade(`ws://127.0.0.1:${g.port}/deployment/nope/ws`);
    expect(byPath.status).toBe(404);
    expect(byPath.body).toMatchObject({ code: 'not_found' });
    const byHost = await refusedUpgrade(`ws://127.0.0.1:${g.port}/ws`, { host: `nope.run.example.com:${g.port}` });
    expect(byHost.status).toBe(404);
  });
});
