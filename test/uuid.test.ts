// lib/uuid.ts: newId's ids are UUIDv7 (RFC 9562): the time first, so ids sort by when they were made.
import { describe, expect, it } from 'vitest';
import { isLowercaseUuid, newId } from '../lib/uuid.ts';
import { enc } from './helpers/assets.ts';
import { uploadForm } from './helpers/harness.ts';
import { startJobs, submitOk } from './helpers/jobs.ts';
import { sumWorkflow } from './helpers/local-nodes.ts';

describe('newId', () => {
  it('is a lowercase UUID of version 7 and RFC 9562 variant, its first 48 bits the time in ms', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(isLowercaseUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
    const ms = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  });

  it('ids made in later milliseconds sort after earlier ones; 10,000 ids are all different', () => {
    const ids: string[] = [];
    let last = Date.now();
    // Ids from at least three distinct milliseconds.
    while (ids.length < 10_000 || Date.now() < last + 3) {
      ids.push(newId());
      if (ids.length === 1) last = Date.now();
    }
    expect(new Set(ids).size).toBe(ids.length);
    const times = ids.map((id) => id.slice(0, 13));
    for (let i = 1; i < times.length; i++) expect(times[i] >= times[i - 1]).toBe(true);
    expect(new Set(times).size).toBeGreaterThan(1);
  });

  it('keeps 74 random bits: the digits after the version vary between ids made one after another', () => {
    const ids = Array.from({ length: 64 }, newId);
    const tails = new Set(ids.map((id) => id.slice(15)));
    expect(tails.size).toBe(64);
    // Every hex digit position of the random part takes more than one value across 64 ids.
    for (const at of [15, 16, 17, 20, 21, 22, 24, 35]) expect(new Set(ids.map((id) => id[at])).size).toBeGreaterThan(1);
  });
});

describe('the ids the service hands out', () => {
  it('a job and an asset get UUIDv7 ids, the later one sorting after the earlier', async () => {
    const h = await startJobs('in-process');
    try {
      const job = await submitOk(h, sumWorkflow('n'));
      const res = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm(enc('v7')) });
      expect(res.status).toBe(201);
      const asset = (await res.json()) as { id: string };
      for (const id of [job.id, asset.id]) {
        expect(isLowercaseUuid(id)).toBe(true);
        expect(id[14]).toBe('7');
      }
      expect(asset.id.slice(0, 13) >= job.id.slice(0, 13)).toBe(true);
    } finally {
      await h.close();
    }
  });
});
