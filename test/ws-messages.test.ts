// The pure translation of an account's live events into `/ws` messages: the
// cases the end-to-end tests cannot easily reach (twin nodes served mid-job,
// a queued job canceled, a requeue, failures without a node or a kind,
// outputs renamed by content and references left alone) and that per-job
// state is dropped when a job ends.
import { describe, expect, it } from 'vitest';
import type { AccountEvent } from '../core/jobs/hub.ts';
import { createMessageTranslator, type Outgoing } from '../core/ws/messages.ts';
import { rewriteOutputRefs } from '../core/ws/output-refs.ts';
import type { EngineEvent } from '../engine/types.ts';
import type { AssetRecord } from '../storage/types.ts';

const T = 1_700_000_000_000;
const JOB = 'job-1';
const HASH = 'a'.repeat(64);

const engine = (event: EngineEvent): AccountEvent => ({ type: 'engine', job_id: JOB, event });
const life = (status: string, error?: Record<string, unknown>): AccountEvent => ({ type: 'lifecycle', job_id: JOB, status, error });
const asset = (over: Partial<AssetRecord>): AssetRecord => ({
  id: 'asset-1',
  account_id: 'acc',
  blob_key: 'k',
  hash: `blake3:${HASH}`,
  size_bytes: 3,
  content_type: 'image/png',
  file_path: 'out_00001_.png',
  tags: ['output'],
  created_at: T,
  expires_at: null,
  job_id: JOB,
  node_id: 's',
  output_type: 'image',
  ...over,
});

function feed(events: AccountEvent[]) {
  const tr = createMessageTranslator(() => T);
  const out: Outgoing[] = events.flatMap((e) => tr.translate(e));
  const named = out.map((o) => (o.kind === 'json' ? o.type : o.kind));
  const json = (type: string): any[] => out.flatMap((o) => (o.kind === 'json' && o.type === type ? [o.data] : []));
  return { tr, out, named, json };
}

describe('ws messages', () => {
  it('a run in the reference order, with a status recount on each lifecycle change', () => {
    const { named, tr } = feed([
      life('queued'),
      life('running'),
      engine({ type: 'execution_start' }),
      engine({ type: 'cached', node_ids: ['a'] }),
      engine({ type: 'executing', node_id: 'b', class_type: 'Wait' }),
      engine({ type: 'progress', node_id: 'b', value: 1, max: 2 }),
      engine({ type: 'executing', node_id: 's', class_type: 'Show' }),
      engine({ type: 'executed', node_id: 's', output: { text: ['1'] } }),
      life('succeeded'),
    ]);
    expect(named).toEqual([
      'queue',
      'queue',
      'execution_start',
      'execution_cached',
      'progress_state',
      'progress_state',
      'executing',
      'progress_state',
      'progress',
      'progress_state',
      'progress_state',
      'executing',
      'executed',
      'progress_state',
      'execution_success',
      // The reference counts the queue as it files the run, then says it is over.
      'queue',
      'executing',
    ]);
    expect(tr.jobCount).toBe(0);
  });

  it('a node served from an earlier twin mid-job shows in progress_state, not in a second execution_cached', () => {
    const { named, json } = feed([
      engine({ type: 'execution_start' }),
      engine({ type: 'cached', node_ids: [] }),
      engine({ type: 'executing', node_id: 'x', class_type: 'Add' }),
      engine({ type: 'cached', node_ids: ['y'] }),
    ]);
    expect(named.filter((n) => n === 'execution_cached')).toHaveLength(1);
    expect(json('progress_state').at(-1)!.nodes.y).toMatchObject({ state: 'finished', value: 1, max: 1 });
  });

  it("an engine notification becomes the reference's `notification` message with its value", () => {
    const { named, json } = feed([engine({ type: 'execution_start' }), engine({ type: 'notification', value: 'moved to another worker' })]);
    expect(named).toEqual(['execution_start', 'notification']);
    expect(json('notification')).toEqual([{ value: 'moved to another worker', id: null, prompt_id: JOB }]);
  });

  it('a job canceled while queued is no interruption: only the queue changes', () => {
    expect(feed([life('queued'), life('canceled')]).named).toEqual(['queue', 'queue']);
  });

  it('a canceled running job is interrupted at its current node, executed listing what finished', () => {
    const { json } = feed([
      life('running'),
      engine({ type: 'execution_start' }),
      engine({ type: 'cached', node_ids: ['c'] }),
      engine({ type: 'executing', node_id: 'a', class_type: 'Number' }),
      engine({ type: 'executing', node_id: 'b', class_type: 'Wait' }),
      life('canceling'),
      life('canceled'),
    ]);
    expect(json('execution_interrupted')).toEqual([{ prompt_id: JOB, node_id: 'b', node_type: 'Wait', executed: ['c', 'a'], timestamp: T }]);
    expect(json('executing').at(-1)).toEqual({ node: null, display_node: null, prompt_id: JOB });
  });

  it('a failure of the service itself (no node, no kind) still says where the job was, as ExecutionError', () => {
    const { json } = feed([
      life('running'),
      engine({ type: 'executing', node_id: 'a', class_type: 'Number' }),
      life('failed', { code: 'internal_error', message: 'boom', exception_type: null, node_id: null, class_type: null, traceback: null }),
    ]);
    expect(json('execution_error')).toEqual([
      {
        prompt_id: JOB,
        node_id: 'a',
        node_type: 'Number',
        executed: [],
        exception_message: 'boom',
        exception_type: 'ExecutionError',
        traceback: [],
        current_inputs: {},
        current_outputs: [],
        timestamp: T,
      },
    ]);
  });

  it('the engine’s kind passes through and a traceback becomes lines; a job that never ran gets no executing null', () => {
    const { json } = feed([
      life('failed', {
        message: 'no money',
        exception_type: 'InsufficientFundsError',
        node_id: 'p',
        class_type: 'Partner',
        traceback: 'Error: x\n  at y',
      }),
    ]);
    expect(json('execution_error')[0]).toMatchObject({
      exception_type: 'InsufficientFundsError',
      node_id: 'p',
      node_type: 'Partner',
      traceback: ['Error: x\n', '  at y\n'],
    });
    expect(json('executing')).toEqual([]);
  });

  it('a requeued job starts over: nodes done before the restart are forgotten', () => {
    const { json } = feed([
      life('running'),
      engine({ type: 'executing', node_id: 'a', class_type: 'Number' }),
      life('queued'),
      life('running'),
      engine({ type: 'executing', node_id: 'b', class_type: 'Wait' }),
      life('canceled'),
    ]);
    expect(json('execution_interrupted')[0].executed).toEqual([]);
  });

  it('keeps no state for a job it never saw run, and at most 1024 jobs', () => {
    const tr = createMessageTranslator(() => T);
    tr.translate({ type: 'lifecycle', job_id: 'elsewhere', status: 'canceling' });
    expect(tr.jobCount).toBe(0);
    for (let i = 0; i < 1100; i++) tr.translate({ type: 'lifecycle', job_id: `j${i}`, status: 'running' });
    expect(tr.jobCount).toBe(1024);
  });

  it('executed renames the node’s output references to the committed assets’ content names', () => {
    const { json } = feed([
      { type: 'output', job_id: JOB, asset: asset({}) },
      engine({
        type: 'executed',
        node_id: 's',
        output: { images: [{ filename: 'out_00001_.png', subfolder: 'sub', type: 'output' }], animated: [false] },
      }),
    ]);
    expect(json('executed')[0].output).toEqual({ images: [{ filename: `${HASH}.png`, subfolder: '', type: 'output' }], animated: [false] });
  });

  it('rewriteOutputRefs matches node and file name once each, and leaves the rest', () => {
    const assets = [
      asset({ id: '1', file_path: 'x.png', hash: `blake3:${'1'.repeat(64)}` }),
      asset({ id: '2', file_path: 'x.png', hash: `blake3:${'2'.repeat(64)}` }),
      asset({ id: '3', file_path: 'y.png', node_id: 'other' }),
      asset({ id: '4', file_path: 'z.png', hash: null }),
    ];
    const refs = (...names: string[]) => names.map((filename) => ({ filename, subfolder: '', type: 'output' }));
    const out = rewriteOutputRefs(
      { images: [...refs('x.png', 'x.png', 'x.png', 'y.png', 'z.png'), { filename: 'x.png', subfolder: '', type: 'temp' }] },
      's',
      assets,
    );
    expect((out.images as Array<{ filename: string }>).map((r) => r.filename)).toEqual([
      `${'1'.repeat(64)}.png`,
      `${'2'.repeat(64)}.png`,
      'x.png',
      'y.png',
      'z.png',
      'x.png',
    ]);
    const untouched = { text: ['hi'] };
    expect(rewriteOutputRefs(untouched, 'none', assets)).toBe(untouched);
  });
});
