// The SQLite storage's page size: 2048 for a database it creates (half of
// SQLite's default: each commit writes whole pages to the WAL), while a
// database created before keeps the size it has and goes on working.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function file(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-page-size-'));
  dirs.push(dir);
  return join(dir, 'graphrun.db');
}

const pageSize = (filename: string) => {
  const db = new Database(filename, { readonly: true });
  try {
    return db.pragma('page_size', { simple: true });
  } finally {
    db.close();
  }
};

/** A job in, claimed, and read back: the store works on the file. */
async function roundTrip(filename: string) {
  const storage = await createSqliteStorage({ filename, blobs: createMemoryBlobStore() });
  try {
    await storage.metadata.upsertAccount({ id: 'acc' });
    await storage.metadata.createJob({ id: 'job-1', account_id: 'acc', status: 'queued', created_at: 1, expires_at: 1e12, workflow: { a: 1 } });
    const claimed = await storage.metadata.claimJob({ account_id: 'acc', limit: 1, owner: 'me', now: 2, lease_ms: 1000 });
    expect(claimed).toMatchObject({ id: 'job-1', status: 'running' });
    expect(await storage.metadata.listJobWorkflows('acc', ['job-1'])).toEqual([{ id: 'job-1', workflow: { a: 1 } }]);
  } finally {
    await storage.close();
  }
}

describe('SQLite page size', () => {
  it('a database the storage creates has 2048-byte pages', async () => {
    const filename = await file();
    await roundTrip(filename);
    expect(pageSize(filename)).toBe(2048);
  });

  it('a database created with 4096-byte pages keeps them and works', async () => {
    const filename = await file();
    const old = new Database(filename);
    old.pragma('journal_mode = WAL');
    old.exec('create table before_graphrun (x integer)');
    old.close();
    expect(pageSize(filename)).toBe(4096);
    await roundTrip(filename);
    expect(pageSize(filename)).toBe(4096);
  });
});
