// VideoTaskStore conformance: records within their account, copies in and
// out, compare-and-set state changes, the by-state listing a restart resumes
// from, and retention.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VideoTaskStore } from '../../storage/types.ts';
import { type MakeStore, videoTask as task } from './store-fixtures.ts';

export function videoTaskStoreSuite(make: MakeStore<VideoTaskStore>): void {
  describe('VideoTaskStore', () => {
    let store: VideoTaskStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    it('creates, reads within the account only, and returns copies', async () => {
      const input = task('t1');
      await store.createVideoTask(input);
      (input.request as { model: string }).model = 'changed';
      const got = await store.getVideoTask('acct', 't1');
      expect(got).toEqual(task('t1'));
      (got!.request as { model: string }).model = 'mutated';
      expect((await store.getVideoTask('acct', 't1'))!.request.model).toBe('gen-q2-turbo');
      expect(await store.getVideoTask('other', 't1')).toBeNull();
      expect(await store.getVideoTask('acct', 'missing')).toBeNull();
      await expect(store.createVideoTask(task('t1'))).rejects.toThrow();
    });

    it('moves state only from the expected state, applying only the given fields', async () => {
      await store.createVideoTask(task('t2'));
      expect(await store.transitionVideoTask('t2', 'queueing', 'processing', { updated_at: 2000 })).toBe(false);
      expect(await store.transitionVideoTask('t2', 'created', 'queueing', { provider_task_id: 'p-1', updated_at: 2000 })).toBe(true);
      expect(await store.transitionVideoTask('t2', 'created', 'queueing', { updated_at: 2500 })).toBe(false);
      // Same state: a field update that still needs the state to be what the writer saw.
      expect(await store.transitionVideoTask('t2', 'queueing', 'queueing', { provider_task_id: 'p-2', updated_at: 2600 })).toBe(true);
      expect(await store.transitionVideoTask('t2', 'queueing', 'failed', { error: { message: 'no', details: ['a'] }, updated_at: 3000 })).toBe(true);
      expect(await store.getVideoTask('acct', 't2')).toEqual(
        task('t2', { state: 'failed', provider_task_id: 'p-2', error: { message: 'no', details: ['a'] }, updated_at: 3000 }),
      );
      expect(await store.transitionVideoTask('missing', 'created', 'queueing', { updated_at: 1 })).toBe(false);
    });

    it('lists tasks by state, oldest first, up to the limit', async () => {
      await store.createVideoTask(task('b', { created_at: 20 }));
      await store.createVideoTask(task('a', { created_at: 30, state: 'processing' }));
      await store.createVideoTask(task('c', { created_at: 10, state: 'success', output_asset_id: 'asset-1' }));
      await store.createVideoTask(task('d', { created_at: 5, state: 'queueing' }));
      expect((await store.listVideoTasksByState(['created', 'queueing', 'processing'], 10)).map((t) => t.id)).toEqual(['d', 'b', 'a']);
      expect((await store.listVideoTasksByState(['created', 'queueing', 'processing'], 2)).map((t) => t.id)).toEqual(['d', 'b']);
      expect(await store.listVideoTasksByState([], 10)).toEqual([]);
      expect((await store.listVideoTasksByState(['success'], 10))[0].output_asset_id).toBe('asset-1');
    });

    it('deletes tasks whose retention ended, in batches, and only those', async () => {
      await store.createVideoTask(task('old-1', { expires_at: 500 }));
      await store.createVideoTask(task('old-2', { expires_at: 1000 }));
      await store.createVideoTask(task('new', { expires_at: 1001 }));
      const first = await store.deleteExpiredVideoTasks(1000, 1);
      expect(first).toHaveLength(1);
      expect((await store.deleteExpiredVideoTasks(1000, 10)).concat(first).sort()).toEqual(['old-1', 'old-2']);
      expect(await store.deleteExpiredVideoTasks(1000, 10)).toEqual([]);
      expect(await store.getVideoTask('acct', 'old-1')).toBeNull();
      expect((await store.getVideoTask('acct', 'new'))?.id).toBe('new');
    });

    it('of concurrent transitions from the same state exactly one wins', async () => {
      await store.createVideoTask(task('t3'));
      const moves = await Promise.all(
        ['p-1', 'p-2', 'p-3', 'p-4'].map((p, i) =>
          store.transitionVideoTask('t3', 'created', 'queueing', { provider_task_id: p, updated_at: 2000 + i }),
        ),
      );
      expect(moves.filter(Boolean)).toHaveLength(1);
      const winner = moves.indexOf(true);
      // The winner's patch, whole; no loser's field leaked in.
      expect(await store.getVideoTask('acct', 't3')).toEqual(
        task('t3', { state: 'queueing', provider_task_id: `p-${winner + 1}`, updated_at: 2000 + winner }),
      );
    });
  });
}
