// GET /api/v2/jobs/{id} of a finished job is answered from the view the
// instance kept (core/jobs/view-cache.ts) after one read of the job's stamp.
// What a user relies on stays true: the same JSON each time with signed URLs
// that work; an output deleted on another instance of the same database is
// gone from the next read; URLs are signed again when the expiry grid moves;
// retention and accounts hold; links follow each request's origin and mount
// prefix; and a job not finished yet is never kept. On SQLite, while nothing
// is committed anywhere (its commit mark stays put), the stamp is not read
// again. Jobs are followed by polling them to their end, and a running one is
// held at gates (Relay).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serve } from '../adapters/node/server.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { blake3Of, bytesOf, expectEnvelope, iso, testClock } from './helpers/assets.ts';
import { type Harness, MODES, type Mode, startHarness } from './helpers/harness.ts';
import {
  asKey,
  expectJobShape,
  expectOutputShape,
  getJob,
  jobNow,
  PNG_SIGNATURE,
  runJob,
  saveImageWorkflow,
  startJobs,
  submitOk,
  until,
  waitForJob,
} from './helpers/jobs.ts';
import { getWithHost, startPeer } from './helpers/peer-service.ts';
import { recordingDatabase } from './helpers/recording-sqlite.ts';
import { createRelayNode, RELAY_OUTPUT, relayWorkflow } from './helpers/relay-node.ts';

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

const opened = <H extends Harness>(h: H): H => {
  closers.push(() => h.close());
  return h;
};

/** GET /api/v2/jobs/{id}: status, the body's exact text, and the answer's headers. */
async function readJob(h: Harness, id: string) {
  const res = await h.fetch(`/api/v2/jobs/${id}`);
  const text = await res.text();
  return { status: res.status, text, type: res.headers.get('content-type'), cache: res.headers.get('cache-control') };
}

/** GET /api/v2/jobs/{id} on `h` as if it were sent to `as` (the same origin): the text that instance builds for it. */
async function readJobAt(h: Harness, as: Harness, id: string): Promise<string> {
  const path = `/api/v2/jobs/${id}`;
  const res =
    h.mode === 'in-process' ? await h.service.fetch(new Request(`${as.base}${path}`)) : await getWithHost(`${h.base}${path}`, new URL(as.base).host);
  expect(res.status).toBe(200);
  return res.text();
}

/** The bytes behind a signed output URL, fetched with no credentials; asserts 200. */
async function fetchOutput(h: Harness, url: string): Promise<Uint8Array> {
  const res = await h.fetch(url);
  expect(res.status, url).toBe(200);
  return bytesOf(res);
}

const accounts = [
  { id: 'alice', apiKeys: ['key-alice'] },
  { id: 'bob', apiKeys: ['key-bob'] },
];

describe.each(MODES)('a finished job read again (%s)', (mode: Mode) => {
  it('gives the same JSON every time, in the contract shape, with signed output URLs that serve the bytes', async () => {
    const h = opened(await startJobs(mode));
    const done = await runJob(h, saveImageWorkflow(0x336699, 3, 2, 'cached'));
    expect(done.status).toBe('succeeded');

    const first = await readJob(h, done.id);
    const second = await readJob(h, done.id);
    const third = await readJob(h, done.id.toUpperCase());
    expect(first).toMatchObject({ status: 200, cache: 'no-store' });
    expect(first.type).toMatch(/^application\/json/);
    expect(second).toEqual(first);
    expect(third).toEqual(first);

    const job = expectJobShape(JSON.parse(first.text));
    expect(job).toMatchObject({ id: done.id, status: 'succeeded', error: null, progress: done.progress });
    expect(job.outputs).toHaveLength(1);
    const [output] = job.outputs;
    expectOutputShape(output, job.id);
    expect(output).toMatchObject({ node_id: 's', type: 'image', content_type: 'image/png' });
    expect(new URL(output.url).pathname).toBe(`/api/v2/assets/${output.id}/content`);

    const bytes = await fetchOutput(h, output.url);
    expect([...bytes.slice(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(bytes.length).toBe(output.size_bytes);
    expect(await blake3Of(bytes)).toBe(output.hash);
  });

  it('signs the output URLs again once the expiry grid has moved a step, and the new URL works', async () => {
    const clock = testClock();
    const h = opened(await startJobs(mode, { now: clock.now }));
    const done = await runJob(h, saveImageWorkflow(0x112233));
    const before = JSON.parse((await readJob(h, done.id)).text);
    expect(JSON.parse((await readJob(h, done.id)).text)).toEqual(before);
    const [old] = before.outputs;
    // One hour's TTL: a grid of one minute (core/signing.ts).
    expect(Date.parse(old.url_expires_at)).toBe(clock.t + 3600_000);

    clock.advance(61_000);
    const after = JSON.parse((await readJob(h, done.id)).text);
    const [fresh] = after.outputs;
    expect(Date.parse(fresh.url_expires_at)).toBeGreaterThan(Date.parse(old.url_expires_at));
    expect(Date.parse(fresh.url_expires_at)).toBeGreaterThanOrEqual(clock.t + 3600_000);
    const [oldQuery, freshQuery] = [new URL(old.url).searchParams, new URL(fresh.url).searchParams];
    expect(Number(freshQuery.get('exp'))).toBe(Date.parse(fresh.url_expires_at) / 1000);
    expect(freshQuery.get('exp')).not.toBe(oldQuery.get('exp'));
    expect(freshQuery.get('sig')).not.toBe(oldQuery.get('sig'));
    // Nothing else moved.
    expect({ ...after, outputs: null }).toEqual({ ...before, outputs: null });
    expect({ ...fresh, url: null, url_expires_at: null }).toEqual({ ...old, url: null, url_expires_at: null });

    expect(await blake3Of(await fetchOutput(h, fresh.url))).toBe(fresh.hash);
  });

  it('answers 404 in the v2 envelope once the retention has passed, though the view was kept', async () => {
    // A second into a step of the expiry grid, with 30 s of retention: the
    // job expires within the step its view was kept for (the same key), so
    // only the check of its stamp can tell.
    const clock = testClock(Date.parse('2030-01-01T00:00:01.000Z'));
    const h = opened(await startJobs(mode, { now: clock.now, jobRetentionSeconds: 30 }));
    const done = await runJob(h, saveImageWorkflow(0x445566));
    expect(done.expires_at).toBe(iso(clock.t + 30_000));
    const kept = await readJob(h, done.id);
    expect(kept.status).toBe(200);
    expect(await readJob(h, done.id)).toEqual(kept);

    clock.advance(29_000);
    expect(await readJob(h, done.id)).toEqual(kept);
    clock.advance(2_000);
    await expectEnvelope(await h.fetch(`/api/v2/jobs/${done.id}`), 404, 'not_found');
    await expectEnvelope(await h.fetch(`/api/v2/jobs/${done.id}`), 404, 'not_found');
    // The same answer as an id that never was.
    const expired = await readJob(h, done.id);
    const unknown = await readJob(h, crypto.randomUUID());
    expect(expired.text).toBe(unknown.text);
  });

  it("never shows one account's job to another: 404 for the other account after the owner's read kept it", async () => {
    const h = opened(await startJobs(mode, { accounts }));
    const alice = asKey(h, 'key-alice');
    const bob = asKey(h, 'key-bob');
    const done = await runJob(alice, saveImageWorkflow(0x778899));
    const kept = await readJob(alice, done.id);
    expect(kept.status).toBe(200);

    const unknown = await readJob(bob, crypto.randomUUID());
    for (const id of [done.id, done.id.toUpperCase()]) {
      const res = await bob.fetch(`/api/v2/jobs/${id}`);
      await expectEnvelope(res.clone(), 404, 'not_found');
      expect(await res.text()).toBe(unknown.text);
    }
    // No key at all: refused before any job is looked at.
    expect((await h.fetch(`/api/v2/jobs/${done.id}`)).status).toBe(401);
    expect(await readJob(alice, done.id)).toEqual(kept);
    // And the other way round: bob's job, kept for bob, is not alice's.
    const bobs = await runJob(bob, saveImageWorkflow(0x998877));
    expect((await readJob(bob, bobs.id)).status).toBe(200);
    await expectEnvelope(await alice.fetch(`/api/v2/jobs/${bobs.id}`), 404, 'not_found');
    expect(JSON.parse((await readJob(alice, done.id)).text).outputs[0].url).toContain('account=alice');
  });

  it("puts each request's origin and mount prefix in the links, not those of the view kept before", async () => {
    const h = opened(await startJobs(mode));
    const done = await runJob(h, saveImageWorkflow(0x202020));
    const plain = JSON.parse((await readJob(h, done.id)).text);
    const path = `/api/v2/jobs/${done.id}`;
    const contentPath = `/api/v2/assets/${plain.outputs[0].id}/content`;
    expect(plain.urls.self).toBe(path);
    expect(plain.outputs[0].url.startsWith(`${h.base}${contentPath}?`)).toBe(true);

    // Another origin: a Host the client names (in process, the URL's origin).
    const otherOrigin = mode === 'in-process' ? 'http://other.test' : 'http://other.test:8080';
    const other =
      mode === 'in-process' ? await h.service.fetch(new Request(`${otherOrigin}${path}`)) : await getWithHost(`${h.base}${path}`, 'other.test:8080');
    expect(other.status).toBe(200);
    const viaOther = JSON.parse(await other.text());
    expect(viaOther.urls.self).toBe(path);
    expect(viaOther.outputs[0].url.startsWith(`${otherOrigin}${contentPath}?`)).toBe(true);

    // Mounted under /graph: in process the adapter's option, else a second server on the same service.
    let prefixedBase = 'http://graphrun.test';
    let viaPrefix: any;
    if (mode === 'in-process') {
      viaPrefix = await (await h.service.fetch(new Request(`${prefixedBase}${path}`), { mountPrefix: '/graph' })).json();
    } else {
      const mounted = await serve(h.service, { host: '127.0.0.1', port: 0, mountPrefix: '/graph' });
      closers.push(() => mounted.close());
      prefixedBase = mounted.url;
      viaPrefix = await (await fetch(`${prefixedBase}/graph${path}`)).json();
      // The signed URL works through the mount that handed it out.
      expect(await blake3Of(await fetchOutput(h, viaPrefix.outputs[0].url))).toBe(plain.outputs[0].hash);
    }
    expect(viaPrefix.urls).toEqual({ self: `/graph${path}`, events: `/graph${path}/events`, cancel: `/graph${path}/cancel` });
    expect(viaPrefix.outputs[0].url.startsWith(`${prefixedBase}/graph${contentPath}?`)).toBe(true);

    // Back at the root, as first asked: the first view again, word for word.
    expect(JSON.parse((await readJob(h, done.id)).text)).toEqual(plain);
    // Every view but its links is the same job.
    const withoutLinks = (j: any) => ({ ...j, urls: null, outputs: j.outputs.map((o: any) => ({ ...o, url: null })) });
    expect(withoutLinks(viaOther)).toEqual(withoutLinks(plain));
    expect(withoutLinks(viaPrefix)).toEqual(withoutLinks(plain));
  });

  it('keeps no view of a job still running: its progress and outputs show as they change, and its end', async () => {
    const relay = createRelayNode();
    const h = opened(await startJobs(mode, { engine: createLocalEngine({ nodes: [...builtinNodes, relay.node] }), progressIntervalMs: 0 }));
    const job = await submitOk(h, relayWorkflow('held', 100));
    // Held at its first gate.
    const waiting = await waitForJob(h, job.id, 'running');
    expect(waiting.outputs).toEqual([]);
    const runningRead = await readJob(h, job.id);
    expect((await jobNow(h, job.id)).progress?.step ?? null).not.toBe(1);

    relay.gates.open('held', 'start');
    // Held at its second gate, past step 1 and its output.
    let midway: any;
    await until('step 1 and the output show', async () => {
      midway = await jobNow(h, job.id);
      return midway.progress?.step === 1 && midway.outputs.length === 1;
    });
    expect(midway.status).toBe('running');
    expect((await jobNow(h, job.id)).status).toBe('running');

    relay.gates.open('held', 'end');
    const done = await waitForJob(h, job.id, 'succeeded');
    // The end's snapshot: every node done.
    expect(done.progress).toMatchObject({ value: 1, nodes_done: 1, nodes_total: 1 });
    expect(done.outputs).toHaveLength(1);
    expect(done.outputs[0]).toMatchObject({ id: midway.outputs[0].id, name: 'relay.png' });
    expect(done.completed_at).not.toBeNull();
    const finishedRead = await readJob(h, job.id);
    // Kept or not, the same kind of answer.
    expect({ type: finishedRead.type, cache: finishedRead.cache }).toEqual({ type: runningRead.type, cache: runningRead.cache });
    const again = JSON.parse(finishedRead.text);
    expect(again).toEqual(done);
    expect(await fetchOutput(h, again.outputs[0].url)).toEqual(RELAY_OUTPUT);
  });
});

describe.each(MODES)('two instances on one SQLite database (%s)', (mode: Mode) => {
  /** `reader` keeps the view, `deleter` deletes the output: the next read on `reader` no longer lists it. */
  async function deletedElsewhere(reader: Harness, deleter: Harness, runner: Harness) {
    const done = await runJob(runner, saveImageWorkflow(0x5a5a5a));
    const kept = await readJob(reader, done.id);
    expect(await readJob(reader, done.id)).toEqual(kept);
    // Word for word what the other instance, which has kept nothing of it yet, builds for the same origin.
    expect(await readJobAt(deleter, reader, done.id)).toBe(kept.text);
    const [output] = JSON.parse(kept.text).outputs;
    expect(output).toBeDefined();
    await fetchOutput(reader, output.url);

    const del = await deleter.fetch(`/api/v2/assets/${output.id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);

    const after = JSON.parse((await readJob(reader, done.id)).text);
    expect(after.outputs).toEqual([]);
    expect({ ...after, outputs: null }).toEqual({ ...JSON.parse(kept.text), outputs: null });
    expect((await jobNow(deleter, done.id)).outputs).toEqual([]);
    expect((await reader.fetch(output.url)).status).toBe(404);
    // And it stays gone on the next reads, the same view on both.
    const again = await readJob(reader, done.id);
    expect(JSON.parse(again.text).outputs).toEqual([]);
    expect(await readJobAt(deleter, reader, done.id)).toBe(again.text);
  }

  it('an output deleted on the other instance is gone from the view this one kept', async () => {
    const a = opened(await startJobs(mode));
    const b = opened(await startPeer(a, { runJobs: false }));
    await deletedElsewhere(a, b, a);
  });

  it('and the other way round: kept on the API-only instance, deleted on the one that ran the job', async () => {
    const a = opened(await startJobs(mode));
    const b = opened(await startPeer(a, { runJobs: false }));
    await deletedElsewhere(b, a, a);
  });

  it('a job that ends on the other instance after this one read it running shows its end here', async () => {
    const relay = createRelayNode();
    const a = opened(await startJobs(mode, { engine: createLocalEngine({ nodes: [...builtinNodes, relay.node] }), progressIntervalMs: 0 }));
    const b = opened(await startPeer(a, { runJobs: false, engine: createLocalEngine({ nodes: [...builtinNodes, createRelayNode().node] }) }));
    const job = await submitOk(b, relayWorkflow('across', 100));
    relay.gates.open('across', 'start');
    await until('running on A with its output', async () => (await jobNow(b, job.id)).outputs.length === 1);
    expect((await getJob(b, job.id)).body.status).toBe('running');
    relay.gates.open('across', 'end');
    const done = await waitForJob(b, job.id, 'succeeded');
    expect(done.progress).toMatchObject({ value: 1, nodes_done: 1, nodes_total: 1 });
    expect(JSON.parse((await readJob(b, job.id)).text)).toEqual(done);
  });
});

describe.each(MODES)('a kept view on SQLite between commits (%s)', (mode: Mode) => {
  /** A harness whose SQLite connection records every statement it runs. */
  async function startRecorded() {
    let ran: string[] = [];
    const h = opened(
      await startHarness(mode, { engine: createLocalEngine({ nodes: builtinNodes }) }, (blobs, dir) => {
        const recording = recordingDatabase(join(dir, 'graphrun.db'));
        ran = recording.ran;
        return createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs, database: recording.db });
      }),
    );
    /** Reads `id` and says whether that read touched the jobs table. */
    const readCounting = async (id: string) => {
      const from = ran.length;
      const read = await readJob(h, id);
      return { read, readRow: ran.slice(from).some((sql) => /\bfrom "jobs"/.test(sql)) };
    };
    return { h, readCounting };
  }

  it('is answered with no read of the job while nothing is committed, and read again after a commit on another instance', async () => {
    const { h, readCounting } = await startRecorded();
    const done = await runJob(h, saveImageWorkflow(0x13579b));
    const kept = await readJob(h, done.id);
    // Once what the job's end left behind is committed, nothing moves: the view answers alone.
    await until('a read answered without reading the job', async () => !(await readCounting(done.id)).readRow, 10_000);
    expect(await readCounting(done.id)).toEqual({ read: kept, readRow: false });

    // Any commit on another connection (here a job queued on an API-only peer) has the stamp read again.
    const peer = opened(await startPeer(h, { runJobs: false }));
    await submitOk(peer, saveImageWorkflow(0x010203));
    expect(await readCounting(done.id)).toEqual({ read: kept, readRow: true });
  });

  it('shows an output deleted on this same instance at the next read', async () => {
    const { h, readCounting } = await startRecorded();
    const done = await runJob(h, saveImageWorkflow(0x2468ac));
    const kept = await readJob(h, done.id);
    await until('a read answered without reading the job', async () => !(await readCounting(done.id)).readRow, 10_000);
    const [output] = JSON.parse(kept.text).outputs;
    expect((await h.fetch(`/api/v2/assets/${output.id}`, { method: 'DELETE' })).status).toBe(204);

    const after = JSON.parse((await readJob(h, done.id)).text);
    expect(after.outputs).toEqual([]);
    expect({ ...after, outputs: null }).toEqual({ ...JSON.parse(kept.text), outputs: null });
  });
});
