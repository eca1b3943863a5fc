// Jobs survive a crash: the service runs in a child process on SQLite + file
// blobs, is killed with SIGKILL while two jobs run and three wait, and a new
// process on the same data directory takes over. Queued jobs run; running
// ones run again ('rerun') or fail with job_interrupted ('fail'); an output
// committed before the crash stays listed and served; Idempotency-Keys used
// before the crash stay used.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';

const SCRIPT = new URL('./helpers/durability-server.ts', import.meta.url).pathname;
const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];
const AUTH = { authorization: 'Bearer k' };

const children: ChildProcess[] = [];
const dirs: string[] = [];
// Children die even when a test fails half way; then the data goes.
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

interface Child {
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

async function startChild(data: string, interruptedJobs: 'rerun' | 'fail'): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, data], {
    env: { ...process.env, DURABILITY_INTERRUPTED_JOBS: interruptedJobs },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      stdout += d;
      // Complete lines only: the JSON one may arrive in pieces.
      const line = stdout
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    void exited.then(({ code, signal }) => reject(new Error(`durability server exited (${code ?? signal}) before listening: ${stderr}`)));
  });
  return { child, url, exited, stderr: () => stderr };
}

async function kill(c: Child): Promise<void> {
  c.child.kill('SIGKILL');
  expect((await c.exited).signal).toBe('SIGKILL');
}

async function submit(base: string, workflow: Workflow, key: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/api/v2/jobs`, {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ workflow }),
  });
  return { status: res.status, body: await res.json() };
}

async function submitOk(base: string, workflow: Workflow, key: string): Promise<any> {
  const r = await submit(base, workflow, key);
  expect(r).toMatchObject({ status: 201 });
  return r.body;
}

async function getJob(base: string, id: string): Promise<any> {
  const res = await fetch(`${base}/api/v2/jobs/${id}`, { headers: AUTH });
  const body = await res.json();
  expect({ status: res.status, body }).toMatchObject({ status: 200 });
  return body;
}

/** Polls the job until `ok` holds; fails with the last Job seen after `ms`. */
async function until(base: string, id: string, what: string, ok: (job: any) => boolean, ms = 10_000): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const job = await getJob(base, id);
    if (ok(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} not ${what} within ${ms} ms: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const terminal = (base: string, id: string) => until(base, id, 'terminal', (j) => TERMINAL.includes(j.status));

/**
 * Two independent branches: EmptyImage -> SaveImage (the first output in
 * workflow order, so it runs and commits first) and Number -> Wait -> Show,
 * which keeps the job running for `steps * ms` after the image is saved.
 */
const outputThenWait = (steps = 40, ms = 50): Workflow => ({
  e: { class_type: 'EmptyImage', inputs: { width: 4, height: 3, batch_size: 1, color: 0x3366cc } },
  s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'durable' } },
  n: { class_type: 'Number', inputs: { value: 7 } },
  w: { class_type: 'Wait', inputs: { value: ['n', 0], ms, steps } },
  show: { class_type: 'Show', inputs: { value: ['w', 0] } },
});

/**
 * Starts a child on a fresh directory, and submits (creator tier: 2 at once)
 * a slow Wait job and the output-then-wait job, which run, and three quick
 * ones, which wait. Returns once both run, the SaveImage output is
 * committed and the three are still queued.
 */
async function crashScene(interruptedJobs: 'rerun' | 'fail') {
  const data = await mkdtemp(join(tmpdir(), 'graphrun-durability-'));
  dirs.push(data);
  const first = await startChild(data, interruptedJobs);
  const slow = await submitOk(first.url, waitWorkflow(1, 50, 40), 'slow');
  const withOutput = await submitOk(first.url, outputThenWait(), 'with-output');
  const queued = [];
  for (let i = 1; i <= 3; i++) queued.push(await submitOk(first.url, sumWorkflow('q', i, 10), `queued-${i}`));

  await until(first.url, slow.id, 'running with progress', (j) => j.status === 'running' && j.progress?.step >= 1);
  const before = await until(first.url, withOutput.id, 'running with an output', (j) => j.status === 'running' && j.outputs.length > 0);
  for (const q of queued) expect((await getJob(first.url, q.id)).status).toBe('queued');
  expect((await getJob(first.url, slow.id)).status).toBe('running');

  expect(before.outputs).toHaveLength(1);
  const output = before.outputs[0];
  expect(output).toMatchObject({ node_id: 's', type: 'image', content_type: 'image/png', job_id: withOutput.id });
  const res = await fetch(output.url);
  expect(res.status).toBe(200);
  const bytes = new Uint8Array(await res.arrayBuffer());
  expect(bytes.length).toBe(output.size_bytes);

  await kill(first);
  const killedAt = Date.now();
  const second = await startChild(data, interruptedJobs);
  return { data, second, killedAt, slow, withOutput, queued, output, bytes };
}

describe('jobs survive a crash (SIGKILL) of the service', () => {
  it("interruptedJobs 'rerun': queued jobs run, running ones run again, committed outputs and used keys stay", async () => {
    const { second, killedAt, slow, withOutput, queued, output, bytes } = await crashScene('rerun');
    const base = second.url;

    for (const j of [slow, withOutput, ...queued]) {
      const done = await terminal(base, j.id);
      expect({ id: j.id, status: done.status, error: done.error }).toEqual({ id: j.id, status: 'succeeded', error: null });
      expect(done.progress?.value).toBe(1);
    }
    // The interrupted two really ran again, on the new process.
    for (const j of [slow, withOutput]) {
      const done = await getJob(base, j.id);
      expect(Date.parse(done.started_at)).toBeGreaterThanOrEqual(killedAt - 1000);
      expect(Date.parse(done.completed_at) - Date.parse(done.started_at)).toBeGreaterThanOrEqual(40 * 50 - 100);
    }

    // The output committed before the crash is still the job's, listed once, and served.
    const after = await getJob(base, withOutput.id);
    expect(after.outputs.map((o: any) => o.id)).toContain(output.id);
    expect(after.outputs.filter((o: any) => o.node_id === 's')).toHaveLength(1);
    const listed = after.outputs.find((o: any) => o.id === output.id);
    expect(listed).toMatchObject({ node_id: 's', name: output.name, hash: output.hash, size_bytes: output.size_bytes, job_id: withOutput.id });
    const served = await fetch(listed.url);
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(bytes);
    const asset = await fetch(`${base}/api/v2/assets/${output.id}`, { headers: AUTH });
    expect(asset.status).toBe(200);
    expect(await asset.json()).toMatchObject({ id: output.id, job_id: withOutput.id });
    // The signing key is in storage: the URL handed out before the crash still works on the new origin.
    const old = new URL(output.url);
    const oldUrl = await fetch(`${base}${old.pathname}${old.search}`);
    expect(oldUrl.status).toBe(200);
    expect(new Uint8Array(await oldUrl.arrayBuffer())).toEqual(bytes);

    // Keys used before the crash stay used; a new key still works.
    for (const key of ['slow', 'with-output', 'queued-1']) {
      const reuse = await submit(base, sumWorkflow('r', 1, 1), key);
      expect({ key, status: reuse.status, code: reuse.body?.error?.code }).toEqual({ key, status: 422, code: 'idempotency_key_reuse' });
    }
    const fresh = await submitOk(base, sumWorkflow('r', 1, 1), 'after-crash');
    expect((await terminal(base, fresh.id)).status).toBe('succeeded');
  });

  it("interruptedJobs 'fail': the running jobs fail with job_interrupted, the queued ones run", async () => {
    const { second, slow, withOutput, queued } = await crashScene('fail');
    const base = second.url;

    for (const j of [slow, withOutput]) {
      const done = await terminal(base, j.id);
      expect({ id: j.id, status: done.status, code: done.error?.code }).toEqual({ id: j.id, status: 'failed', code: 'job_interrupted' });
      expect(done.error.message).toMatch(/stopped|interrupted/i);
      expect(done.completed_at).not.toBeNull();
      expect(done.queue_position).toBeNull();
    }
    for (const q of queued) {
      const done = await terminal(base, q.id);
      expect({ id: q.id, status: done.status, error: done.error }).toEqual({ id: q.id, status: 'succeeded', error: null });
    }
    // Failed, not run again: nothing moved after the first look.
    await new Promise((r) => setTimeout(r, 200));
    for (const j of [slow, withOutput]) expect((await getJob(base, j.id)).status).toBe('failed');
  });
});
