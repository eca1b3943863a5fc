// Canceling a running job: the engine stops between nodes and between a
// node's progress steps, and rejects with the abort, not an ExecutionError.
import { describe, expect, it } from 'vitest';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { ExecutionError, type Workflow } from '../../engine/types.ts';
import { createFakeExecutionContext } from '../helpers/fake-execution-context.ts';
import { createTestNodes } from '../helpers/local-nodes.ts';

const workflow: Workflow = {
  '1': { class_type: 'Number', inputs: { value: 3 } },
  '2': { class_type: 'Stepper', inputs: { value: ['1', 0] } },
  '3': { class_type: 'Show', inputs: { value: ['2', 0] } },
};
const job = { id: 'job-1', account_id: 'acct', workflow };

function setup() {
  const test = createTestNodes({ steps: 10 });
  return { ...test, engine: createLocalEngine({ nodes: test.nodes }) };
}

describe('cancel', () => {
  it('stops between nodes', async () => {
    const { engine, runs } = setup();
    const fake = createFakeExecutionContext({ abortWhen: (e) => e.type === 'executing' && e.node_id === '1' });
    const err = await engine.execute(job, fake.ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DOMException);
    expect((err as DOMException).name).toBe('AbortError');
    expect(runs).toEqual({ Number: 1 });
    expect(fake.of('executing').map((e) => e.node_id)).toEqual(['1']);
  });

  it('stops between the steps of a node', async () => {
    const { engine, runs } = setup();
    const fake = createFakeExecutionContext({ abortWhen: (e) => e.type === 'progress' && e.value === 3 });
    const err = await engine.execute(job, fake.ctx).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(ExecutionError);
    expect((err as Error).name).toBe('AbortError');
    expect(fake.of('progress').map((e) => e.value)).toEqual([1, 2, 3]);
    expect(runs.Show).toBeUndefined();
    expect(fake.types().at(-1)).toBe('progress');
  });

  it('rejects with the reason the job was canceled with', async () => {
    const { engine } = setup();
    const fake = createFakeExecutionContext();
    const reason = new Error('canceled by the user');
    const done = engine.execute(job, fake.ctx);
    fake.controller.abort(reason);
    await expect(done).rejects.toBe(reason);
  });

  it('does not start a job canceled before it began', async () => {
    const { engine, runs } = setup();
    const fake = createFakeExecutionContext();
    fake.controller.abort();
    await expect(engine.execute(job, fake.ctx)).rejects.toMatchObject({ name: 'AbortError' });
    expect(fake.events).toEqual([]);
    expect(runs).toEqual({});
  });
});
