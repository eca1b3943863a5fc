// Video tasks beyond the store's own conformance (test/suites/video-task-store.ts,
// run by every backend's storage test): a task survives reopening the SQLite
// file, and the service's sweep deletes tasks whose retention ended.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../index.ts';
import { createMemoryBlobStore, createMemoryStorage } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { videoTask as task } from './suites/store-fixtures.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-video-store-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('video tasks on SQLite', () => {
  it('survive reopening the database file', async () => {
    const filename = join(dir, 'reopen.sqlite');
    const first = await createSqliteStorage({ filename, blobs: createMemoryBlobStore() });
    await first.metadata.createVideoTask(task('kept', { state: 'processing', provider_task_id: 'p-9' }));
    await first.close();
    const second = await createSqliteStorage({ filename, blobs: createMemoryBlobStore() });
    expect(await second.metadata.listVideoTasksByState(['processing'], 10)).toEqual([task('kept', { state: 'processing', provider_task_id: 'p-9' })]);
    await second.close();
  });
});

describe('video tasks and the sweep', () => {
  it('sweep() deletes tasks past their retention and keeps the others', async () => {
    let now = 50_000;
    const storage = createMemoryStorage();
    const service = await createService({ storage, now: () => now, sweepIntervalMs: 0 });
    try {
      await storage.metadata.createVideoTask(task('due', { expires_at: 60_000 }));
      await storage.metadata.createVideoTask(task('kept', { expires_at: 60_001 }));
      await service.sweep();
      expect(await storage.metadata.getVideoTask('acct', 'due')).not.toBeNull();
      now = 60_000;
      await service.sweep();
      expect(await storage.metadata.getVideoTask('acct', 'due')).toBeNull();
      expect(await storage.metadata.getVideoTask('acct', 'kept')).not.toBeNull();
    } finally {
      await service.close();
    }
  });
});
