// The local engine running jobs: event order, outputs of linked nodes, the
// cross-job cache, node failures and validation failures as ExecutionErrors.
import { describe, expect, it } from 'vitest';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { ExecutionError, type Workflow } from '../../engine/types.ts';
import { createFakeExecutionContext } from '../helpers/fake-execution-context.ts';
import { createTestNodes, sumWorkflow } from '../helpers/local-nodes.ts';

const sum = sumWorkflow;
const job = (workflow: Workflow, id = 'job-1') => ({ id, account_id: 'acct', workflow });

function setup(cacheSize?: number) {
  const test = createTestNodes();
  return { ...test, engine: createLocalEngine({ nodes: test.nodes, cacheSize }) };
}

describe('createLocalEngine: the Engine surface', () => {
  it('is ready, lists its node definitions and validates', async () => {
    const { engine } = setup();
    expect(engine.readiness()).toEqual({ state: 'ready' });
    expect(Object.keys(await engine.nodeDefinitions())).toContain('Add');
    expect(await engine.validate(sum(''))).toMatchObject({ ok: true, outputs: ['4'] });
    expect(Object.keys(await createLocalEngine().nodeDefinitions())).toContain('PrimitiveInt');
  });
});

describe('createLocalEngine: execute', () => {
  it('emits execution_start, cached, then executing/executed per node in order', async () => {
    const { engine } = setup();
    const fake = createFakeExecutionContext();
    await engine.execute(job(sum('')), fake.ctx);
    expect(fake.types()).toEqual(['execution_start', 'cached', 'executing', 'executing', 'executing', 'executing', 'executed']);
    expect(fake.of('cached')).toEqual([{ type: 'cached', node_ids: [] }]);
    expect(fake.of('executing').map((e) => [e.node_id, e.class_type])).toEqual([
      ['1', 'Number'],
      ['2', 'Number'],
      ['3', 'Add'],
      ['4', 'Show'],
    ]);
    expect(fake.of('executed')).toEqual([{ type: 'executed', node_id: '4', output: { text: ['7'] } }]);
  });

  it('emits progress between executing and the next node', async () => {
    const { engine } = setup();
    const fake = createFakeExecutionContext();
    const w = sum('');
    w['3'] = { class_type: 'Stepper', inputs: { value: ['1', 0] } };
    await engine.execute(job(w), fake.ctx);
    expect(fake.types()).toEqual([
      'execution_start',
      'cached',
      'executing',
      'executing',
      'progress',
      'progress',
      'progress',
      'executing',
      'executed',
    ]);
    expect(fake.of('progress').map((e) => [e.node_id, e.value, e.max])).toEqual([
      ['3', 1, 3],
      ['3', 2, 3],
      ['3', 3, 3],
    ]);
  });

  it('runs only the outputs that passed validation', async () => {
    const { engine, runs } = setup();
    const w = { ...sum('a'), ...sum('b') };
    w.b1.inputs.value = -1;
    const fake = createFakeExecutionContext();
    await engine.execute(job(w), fake.ctx);
    expect(fake.of('executed').map((e) => e.node_id)).toEqual(['a4']);
    expect(runs.Show).toBe(1);
  });

  it('serves an identical subgraph of a later job from the cache without running it', async () => {
    const { engine, runs } = setup();
    await engine.execute(job(sum('a')), createFakeExecutionContext().ctx);
    expect(runs).toEqual({ Number: 2, Add: 1, Show: 1 });
    // Same graph under other ids, and one more node downstream of the cached Add.
    const w = sum('b');
    w.b5 = { class_type: 'ShowAny', inputs: { value: ['b3', 0] } };
    const fake = createFakeExecutionContext();
    await engine.execute(job(w, 'job-2'), fake.ctx);
    // Output nodes are not served across jobs: each job commits its own outputs.
    expect(fake.of('cached')).toEqual([{ type: 'cached', node_ids: ['b1', 'b2', 'b3'] }]);
    expect(runs).toEqual({ Number: 2, Add: 1, Show: 2, ShowAny: 1 });
    expect(
      fake
        .of('executing')
        .map((e) => e.node_id)
        .sort(),
    ).toEqual(['b4', 'b5']);
    expect(fake.of('executed')).toEqual([
      { type: 'executed', node_id: 'b4', output: { text: ['7'] } },
      { type: 'executed', node_id: 'b5', output: { text: ['7'] } },
    ]);
  });

  it('reruns what a changed constant affects, and only that', async () => {
    const { engine, runs } = setup();
    await engine.execute(job(sum('', 3, 4)), createFakeExecutionContext().ctx);
    const fake = createFakeExecutionContext();
    await engine.execute(job(sum('', 3, 5), 'job-2'), fake.ctx);
    expect(fake.of('cached')[0].node_ids).toEqual(['1']);
    expect(fake.of('executed')[0].output).toEqual({ text: ['8'] });
    expect(runs).toEqual({ Number: 3, Add: 2, Show: 2 });
  });

  it('always runs a non-cacheable node and what depends on it', async () => {
    const { engine, runs } = setup();
    const w: Workflow = {
      '1': { class_type: 'Random', inputs: {} },
      '2': { class_type: 'Show', inputs: { value: ['1', 0] } },
    };
    await engine.execute(job(w), createFakeExecutionContext().ctx);
    const fake = createFakeExecutionContext();
    await engine.execute(job(w, 'job-2'), fake.ctx);
    expect(fake.of('cached')[0].node_ids).toEqual([]);
    expect(runs).toEqual({ Random: 2, Show: 2 });
  });

  it('runs an identical node twice in one job only once', async () => {
    const { engine, runs } = setup();
    const w = sum('');
    w['5'] = { class_type: 'Number', inputs: { value: 3 } };
    w['6'] = { class_type: 'Show', inputs: { value: ['5', 0] } };
    const fake = createFakeExecutionContext();
    await engine.execute(job(w), fake.ctx);
    expect(runs.Number).toBe(2);
    expect(fake.of('executed').map((e) => e.output)).toEqual([{ text: ['7'] }, { text: ['3'] }]);
  });

  it('forgets the least recently used results beyond cacheSize', async () => {
    const { engine, runs } = setup(2);
    await engine.execute(job(sum('')), createFakeExecutionContext().ctx);
    const fake = createFakeExecutionContext();
    await engine.execute(job(sum(''), 'job-2'), fake.ctx);
    // Only the second Number and Add (the last two stored) survived; the output
    // node Show runs again on the cached Add, so nothing upstream runs.
    expect(fake.of('cached')[0].node_ids).toEqual(['2', '3']);
    expect(runs).toEqual({ Number: 2, Add: 1, Show: 2 });
  });

  it('turns a node exception into an ExecutionError naming the node', async () => {
    const { engine } = setup();
    const w = sum('');
    w['3'] = { class_type: 'Fail', inputs: { value: ['1', 0] } };
    const fake = createFakeExecutionContext();
    const err = await engine.execute(job(w), fake.ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExecutionError);
    expect(err).toMatchObject({ message: 'cannot do that', exception_type: 'TypeError', node_id: '3', class_type: 'Fail' });
    expect((err as ExecutionError).traceback).toContain('cannot do that');
    expect(fake.types().at(-1)).toBe('executing');
  });

  it('rejects an invalid workflow with a ValidationError before starting', async () => {
    const { engine } = setup();
    const w = sum('');
    w['1'].inputs.value = 1000;
    const fake = createFakeExecutionContext();
    const err = await engine.execute(job(w), fake.ctx).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'ExecutionError', exception_type: 'ValidationError', node_id: null });
    expect((err as Error).message).toContain('Prompt outputs failed validation');
    expect(fake.events).toEqual([]);
  });
});
