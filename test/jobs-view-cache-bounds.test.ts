// The finished-job view cache's own rules (core/jobs/view-cache.ts): what a
// kept view answers to, and the bounds on what is kept.
import { describe, expect, it } from 'vitest';
import { createJobViewCache, type KeptView } from '../core/jobs/view-cache.ts';

const stamp = (view_version: number) => ({ status: 'succeeded', expires_at: 0, view_version });
const view = (text: string, over: Partial<KeptView> = {}): KeptView => ({ account_id: 'a', key: 'k', stamp: stamp(1), text, ...over });

describe('job view cache', () => {
  it('answers only for the same account, key and view version', () => {
    const cache = createJobViewCache({ entries: 10, chars: 1000 });
    cache.set('j', view('{"v":1}'));
    expect(cache.get('j', 'a', 'k', stamp(1))).toBe('{"v":1}');
    expect(cache.get('j', 'b', 'k', stamp(1))).toBeUndefined();
    expect(cache.get('j', 'a', 'other', stamp(1))).toBeUndefined();
    expect(cache.get('j', 'a', 'k', stamp(2))).toBeUndefined();
    expect(cache.get('x', 'a', 'k', stamp(1))).toBeUndefined();
  });

  it('answers without a stamp only under the commit mark of the read that last found it current', () => {
    const cache = createJobViewCache({ entries: 10, chars: 1000 });
    cache.set('j', view('{"v":1}', { mark: 'm1' }));
    expect(cache.unchanged('j', 'a', 'k', 'm1')?.text).toBe('{"v":1}');
    // Anything committed since (another mark), another account or key: the stamp must be read.
    expect(cache.unchanged('j', 'a', 'k', 'm2')).toBeUndefined();
    expect(cache.unchanged('j', 'b', 'k', 'm1')).toBeUndefined();
    expect(cache.unchanged('j', 'a', 'other', 'm1')).toBeUndefined();
    // A stamp read that finds it current under a new mark moves it there, with the stamp's status and retention.
    const expired = { status: 'expired', expires_at: 5, view_version: 1 };
    expect(cache.get('j', 'a', 'k', expired, 'm2')).toBe('{"v":1}');
    expect(cache.unchanged('j', 'a', 'k', 'm1')).toBeUndefined();
    expect(cache.unchanged('j', 'a', 'k', 'm2')?.stamp).toEqual(expired);
    // A read without a mark (the store could not tell) leaves none to answer to.
    cache.get('j', 'a', 'k', stamp(1));
    expect(cache.unchanged('j', 'a', 'k', 'm2')).toBeUndefined();
    // A new version of the view replaces the old one, mark and all.
    cache.set('j', view('{"v":2}', { stamp: stamp(2), mark: 'm3' }));
    expect(cache.unchanged('j', 'a', 'k', 'm3')?.text).toBe('{"v":2}');
  });

  it('keeps the most recently used views within its entry and size bounds', () => {
    const cache = createJobViewCache({ entries: 2, chars: 10 });
    cache.set('j1', view('aaa'));
    cache.set('j2', view('bbb'));
    // j1 used last: j2 is the one that goes when j3 comes.
    cache.get('j1', 'a', 'k', stamp(1));
    cache.set('j3', view('ccc'));
    expect([cache.has('j1'), cache.has('j2'), cache.has('j3')]).toEqual([true, false, true]);
    // 3 + 8 characters pass the size bound: the least recently used goes.
    cache.set('j4', view('dddddddd'));
    expect([cache.has('j1'), cache.has('j3'), cache.has('j4')]).toEqual([false, false, true]);
    expect(cache.size).toBe(1);
  });

  it('keeps no view larger than its size bound, and drops the older view of that job', () => {
    const cache = createJobViewCache({ entries: 10, chars: 5 });
    cache.set('j', view('abc'));
    cache.set('j', view('abcdefgh', { stamp: stamp(2) }));
    expect(cache.has('j')).toBe(false);
    expect(cache.size).toBe(0);
  });
});
