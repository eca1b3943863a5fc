// When a run's progress reaches its job row: at most once per
// progressIntervalMs, the first one interval into the run. A job that ends
// sooner writes its progress once, with its end. Meanwhile the instance
// running it answers GET /api/v2/jobs/{id} and a new event stream with what
// the run published last.
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService, type Service, type ServiceOptions, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import type { Harness } from './helpers/harness.ts';
import { createTestNodes, sumWorkflow } from './helpers/local-nodes.ts';
import { createRelayNode, relayWorkflow } from './helpers/relay-node.ts';
import { openEvents, type SseReader } from './helpers/sse-client.ts';

const ORIGIN = 'http://progress.test';
let service: Service | undefined;

afterEach(async () => {
  await service?.close();
  service = undefined;
});

/** A service on memory storage whose progress saves are recorded (job id, progress). */
async function start(progressIntervalMs: number, options: Partial<ServiceOptions> = {}) {
  const storage = createMemoryStorage();
  const saves: Array<{ id: string; progress: Record<string, unknown> }> = [];
  const waiters: Array<() => void> = [];
  const save = storage.metadata.saveProgress;
  storage.metadata.saveProgress = async (id, progress, ...rest) => {
    await save(id, progress, ...rest);
    saves.push({ id, progress });
    for (const w of waiters.splice(0)) w();
  };
  const relay = createRelayNode();
  service = await createService({
    storage,
    engine: createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes, relay.node] }),
    logger: silentLogger,
    sweepIntervalMs: 0,
    progressIntervalMs,
    ...options,
  });
  /** Resolves once a save of job `id` has a value over `value`. */
  const saved = (id: string, value: number) =>
    new Promise<void>((resolve) => {
      const check = () => (saves.some((s) => s.id === id && (s.progress.value as number) > value) ? resolve() : waiters.push(check));
      check();
    });
  return { saves, saved, gates: relay.gates, storage };
}

async function submit(workflow: unknown): Promise<string> {
  const res = await service!.fetch(
    new Request(`${ORIGIN}/api/v2/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workflow }) }),
  );
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function job(id: string): Promise<{ status: string; progress: ({ value: number } & Record<string, unknown>) | null }> {
  const res = await service!.fetch(new Request(`${ORIGIN}/api/v2/jobs/${id}`));
  expect(res.status).toBe(200);
  return res.json() as never;
}

async function until(id: string, status: string) {
  // The job ends on its own; each poll yields to it.
  for (;;) {
    const j = await job(id);
    if (j.status === status) return j;
    if (['succeeded', 'failed', 'canceled'].includes(j.status)) throw new Error(`job ended ${j.status}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** The next `progress` event's data on a stream (its connect snapshot first). */
async function nextProgress(sse: SseReader): Promise<Record<string, unknown>> {
  for (;;) {
    const event = await sse.nextEvent(10_000);
    if (!event) throw new Error('the stream ended before a progress event');
    if (event.event === 'progress') return event.json;
  }
}

describe('progress saves of a run', () => {
  it('a job that ends within the first interval writes its progress only with its end', async () => {
    const { saves } = await start(60_000);
    const id = await submit(sumWorkflow('n', 2, 5));
    const done = await until(id, 'succeeded');
    expect(saves.filter((s) => s.id === id)).toEqual([]);
    // The end's write carries the whole run's progress.
    expect(done.progress).toMatchObject({ value: 1, nodes_done: 4, nodes_total: 4 });
  });

  it('a job still running after one interval has its progress saved, and a poll reads it', async () => {
    const { saves, saved, gates } = await start(20);
    const id = await submit(relayWorkflow('slow'));
    gates.open('slow', 'start');
    // Blocked at its second gate, after its first step: saved one interval into the run, or the next.
    await saved(id, 0);
    const running = await job(id);
    expect(running.status).toBe('running');
    expect(running.progress).not.toBeNull();
    expect(running.progress!.value).toBeGreaterThan(0);
    expect(running.progress!.value).toBeLessThan(1);
    expect(saves.filter((s) => s.id === id).length).toBeGreaterThanOrEqual(1);
    gates.open('slow', 'end');
    const done = await until(id, 'succeeded');
    expect(done.progress).toMatchObject({ value: 1 });
  });

  it('before its first save, the instance running a job shows its progress to a poll and to a new stream', async () => {
    const { saves, gates } = await start(600_000);
    const id = await submit(relayWorkflow('early'));
    const h = { fetch: (path: string, init?: RequestInit) => service!.fetch(new Request(`${ORIGIN}${path}`, init)) } as unknown as Harness;
    const first = (await openEvents(h, id)).sse!;
    // The run's first snapshot, published as the Relay node starts (it waits at its gate).
    const seen = await nextProgress(first);
    expect(seen.current_node).toBe('r');
    expect(saves.filter((x) => x.id === id)).toEqual([]);
    const polled = await job(id);
    expect(polled.status).toBe('running');
    expect(polled.progress).toEqual(seen);
    const second = (await openEvents(h, id)).sse!;
    expect(await nextProgress(second)).toEqual(seen);
    gates.open('early', 'start');
    gates.open('early', 'end');
    const done = await until(id, 'succeeded');
    expect(done.progress).toMatchObject({ value: 1 });
    await first.cancel();
    await second.cancel();
  });

  it('a run cut short by shutdown before its first save still leaves its progress on the row', async () => {
    const { saves, gates, storage } = await start(600_000, { interruptedJobs: 'fail' });
    const id = await submit(relayWorkflow('cut'));
    const h = { fetch: (path: string, init?: RequestInit) => service!.fetch(new Request(`${ORIGIN}${path}`, init)) } as unknown as Harness;
    const sse = (await openEvents(h, id)).sse!;
    const seen = await nextProgress(sse);
    await sse.cancel();
    expect(saves.filter((x) => x.id === id)).toEqual([]);
    await service!.close();
    service = undefined;
    const row = await storage.metadata.getJobById(id);
    expect(row).toMatchObject({ status: 'failed', progress: seen });
    gates.open('cut', 'start');
  });
});
