// lib/any-signal.ts: aborts with the first source's reason, at once for a
// source aborted already, and after release follows no source (a long-lived
// one keeps no listener of it).
import { describe, expect, it } from 'vitest';
import { anySignal } from '../lib/any-signal.ts';

describe('anySignal', () => {
  it('aborts with the reason of the first source that aborts, and only once', () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const { signal } = anySignal([a.signal, b.signal]);
    let aborts = 0;
    signal.addEventListener('abort', () => aborts++);
    expect(signal.aborted).toBe(false);
    const reason = new Error('b went first');
    b.abort(reason);
    a.abort(new Error('a too'));
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
    expect(aborts).toBe(1);
  });

  it('is aborted at once when a source already is', () => {
    const a = new AbortController();
    a.abort('gone');
    const { signal, release } = anySignal([new AbortController().signal, a.signal]);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('gone');
    release();
  });

  it('after release, a source aborting leaves the signal as it was; release twice is harmless', () => {
    const [a, long] = [new AbortController(), new AbortController()];
    const { signal, release } = anySignal([a.signal, long.signal]);
    release();
    release();
    long.abort();
    a.abort();
    expect(signal.aborted).toBe(false);
  });

  it('keeps no listener on a long-lived source once released, nor once it aborted', () => {
    const long = new AbortController();
    const remove = (long.signal as unknown as { removeEventListener: AbortSignal['removeEventListener'] }).removeEventListener.bind(long.signal);
    let removed = 0;
    long.signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => {
      removed++;
      return remove(...args);
    }) as AbortSignal['removeEventListener'];
    for (let i = 0; i < 100; i++) anySignal([new AbortController().signal, long.signal]).release();
    expect(removed).toBe(100);
    const job = new AbortController();
    anySignal([job.signal, long.signal]);
    job.abort();
    expect(removed).toBe(101);
  });
});
