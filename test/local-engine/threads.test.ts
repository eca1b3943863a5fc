// The local engine on worker threads (Node's worker_threads): nodes compute
// off the calling thread, a cancel stops a job inside a long node, a thread
// that dies or outgrows its heap fails its job alone and is replaced, and
// partner nodes and function settings stay on the request thread.
import { afterEach, describe, expect, it } from 'vitest';
import { nodeThreadSpawner } from '../../adapters/node/threads.ts';
import { createLocalEngine, type LocalEngineOptions } from '../../engine/local/engine.ts';
import type { Engine, EngineEvent, Workflow } from '../../engine/types.ts';
import { nodes } from '../fakes/thread-nodes.ts';
import { createFakeExecutionContext } from '../helpers/fake-execution-context.ts';

const engines: Engine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

function engineWith(opts: LocalEngineOptions = {}): Engine {
  const engine = createLocalEngine({
    nodes,
    nodesModule: new URL('../fakes/thread-nodes.ts', import.meta.url),
    threads: nodeThreadSpawner(),
    threadCount: 1,
    ...opts,
  });
  engines.push(engine);
  return engine;
}

const spin = (ms: number): Workflow => ({
  '1': { class_type: 'Spin', inputs: { ms } },
  '2': { class_type: 'PreviewAny', inputs: { source: ['1', 0] } },
});
const single = (class_type: string, inputs: Record<string, unknown> = {}): Workflow => ({ '1': { class_type, inputs } });
const job = (workflow: Workflow, account_id = 'acct') => ({ id: crypto.randomUUID(), account_id, workflow });
const isSpinning = (e: EngineEvent) => e.type === 'executing' && e.class_type === 'Spin';

/** A fake context that resolves `started` when the Spin node begins. */
function watching() {
  const fake = createFakeExecutionContext();
  let began!: () => void;
  const started = new Promise<void>((resolve) => (began = resolve));
  const emit = fake.ctx.emit;
  fake.ctx.emit = (event) => {
    emit(event);
    if (isSpinning(event)) began();
  };
  return { ...fake, started };
}

describe('the local engine on worker threads', () => {
  it('runs nodes on a worker thread and partner nodes on the request thread', async () => {
    const fake = createFakeExecutionContext();
    const workflow = { ...single('WhereAmI'), '2': { class_type: 'PartnerWhereAmI', inputs: {} } };
    await engineWith().execute(job(workflow), fake.ctx);
    expect(fake.of('executed').map((e) => [e.node_id, e.output.text])).toEqual([
      ['1', ['worker thread']],
      ['2', ['request thread']],
    ]);
  });

  it('keeps the calling thread free while a node computes', async () => {
    const fake = watching();
    let settled = false;
    const run = engineWith()
      .execute(job(spin(60_000)), fake.ctx)
      .finally(() => {
        settled = true;
      });
    run.catch(() => {});
    await fake.started;
    // A timer fires while the node is still busy: on the calling thread it would wait for the node.
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(settled).toBe(false);
    fake.controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a cancel stops a job inside a node that never pauses, and the next job runs on a new thread', async () => {
    const engine = engineWith();
    const fake = watching();
    const run = engine.execute(job(spin(600_000)), fake.ctx);
    await fake.started;
    fake.controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(fake.types()).not.toContain('executed');

    const next = createFakeExecutionContext();
    await engine.execute(job(single('WhereAmI')), next.ctx);
    expect(next.of('executed')[0].output).toEqual({ text: ['worker thread'] });
  });

  it('a job that outgrows its thread heap fails with OOMError, and the engine carries on', async () => {
    const engine = engineWith({ maxJobMemoryBytes: 64 * 1024 * 1024 });
    await expect(engine.execute(job(single('HeapHog')), createFakeExecutionContext().ctx)).rejects.toMatchObject({
      name: 'ExecutionError',
      exception_type: 'OOMError',
      message: expect.stringMatching(/ran out of memory.*64 MiB/),
    });
    const next = createFakeExecutionContext();
    await engine.execute(job(single('WhereAmI')), next.ctx);
    expect(next.types()).toContain('executed');
  });

  it('a thread that dies fails its job with WorkerError and is replaced', async () => {
    const engine = engineWith();
    await expect(engine.execute(job(single('Crash')), createFakeExecutionContext().ctx)).rejects.toMatchObject({
      exception_type: 'WorkerError',
      message: expect.stringContaining('a timer threw'),
    });
    const next = createFakeExecutionContext();
    await engine.execute(job(single('WhereAmI')), next.ctx);
    expect(next.types()).toContain('executed');
  });

  it('calls settings that are functions on the request thread', async () => {
    const fake = createFakeExecutionContext();
    const probe = async (text: string) => `asked about ${text}`;
    await engineWith({ settings: { probe, plain: 1 } }).execute(job(single('AskSetting', { text: 'dns' })), fake.ctx);
    expect(fake.of('executed')[0].output).toEqual({ text: ['asked about dns', 'worker thread'] });
  });

  it('runs one job per thread: the next waits for a free thread, and a cancel while waiting leaves the queue', async () => {
    const engine = engineWith({ threadCount: 1 });
    const first = watching();
    const running = engine.execute(job(spin(600_000)), first.ctx);
    running.catch(() => {});
    await first.started;
    const waiting = createFakeExecutionContext();
    const queued = engine.execute(job(single('WhereAmI')), waiting.ctx);
    const third = createFakeExecutionContext();
    const after = engine.execute(job(single('WhereAmI')), third.ctx);
    waiting.controller.abort();
    await expect(queued).rejects.toMatchObject({ name: 'AbortError' });
    expect(waiting.events).toEqual([]);
    expect(third.events).toEqual([]);
    first.controller.abort();
    await after;
    expect(third.types()).toContain('executed');
  });

  it("serves an account's repeated job from its thread's cache, and never another account's", async () => {
    const engine = engineWith({ threadCount: 2 });
    const workflow: Workflow = {
      '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 0x102030 } },
      '2': { class_type: 'PreviewAny', inputs: { source: ['1', 0] } },
    };
    await engine.execute(job(workflow, 'alice'), createFakeExecutionContext().ctx);
    const bob = createFakeExecutionContext();
    await engine.execute(job(workflow, 'bob'), bob.ctx);
    expect(bob.of('cached')[0].node_ids).toEqual([]);
    const again = createFakeExecutionContext();
    await engine.execute(job(workflow, 'alice'), again.ctx);
    expect(again.of('cached')[0].node_ids).toEqual(['1']);
  });

  it('close() ends a running job and one waiting for a thread', async () => {
    const engine = engineWith({ threadCount: 1 });
    const fake = watching();
    const run = engine.execute(job(spin(600_000)), fake.ctx);
    await fake.started;
    const waiting = engine.execute(job(single('WhereAmI')), createFakeExecutionContext().ctx);
    await engine.close();
    await expect(run).rejects.toMatchObject({ exception_type: 'WorkerError', message: expect.stringContaining('closed') });
    await expect(waiting).rejects.toMatchObject({ exception_type: 'WorkerError', message: expect.stringContaining('closed') });
  });

  it('refuses worker threads for nodes it cannot load there', () => {
    expect(() => createLocalEngine({ nodes, threads: nodeThreadSpawner() })).toThrow(/nodesModule/);
  });
});
