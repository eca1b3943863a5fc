// When a run's progress reaches its job row (what GET /api/v2/jobs/{id} reads):
// at most once per progressIntervalMs, the first one interval into the run. A
// job that ends sooner writes its progress once, with its end; live streams
// hear every snapshot the throttle lets through, at once.
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService, type Service, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { createTestNodes, sumWorkflow } from './helpers/local-nodes.ts';
import { createRelayNode, relayWorkflow } from './helpers/relay-node.ts';

const ORIGIN = 'http://progress.test';
let service: Service | undefined;

afterEach(async () => {
  await service?.close();
  service = undefined;
});

/** A service on memory storage whose progress saves are recorded (job id, progress). */
async function start(progressIntervalMs: number) {
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
  });
  /** Resolves once a save of job `id` has a value over `value`. */
  const saved = (id: string, value: number) =>
    new Promise<void>((resolve) => {
      const check = () => (saves.some((s) => s.id === id && (s.progress.value as number) > value) ? resolve() : waiters.push(check));
      check();
    });
  return { saves, saved, gates: relay.gates };
}

async function submit(workflow: unknown): Promise<string> {
  const res = await service!.fetch(
    new Request(`${ORIGIN}/api/v2/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workflow }) }),
  );
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function job(id: string): Promise<{ status: string; progress: { value: number } | null }> {
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
});
