// BlobLockStore conformance: a key's lock holds across the stores of one
// storage (two processes) and within one, other keys never wait on it, and
// the lock goes with its holder's end however that ends. Only backends that
// processes share implement it; the fixture says when a holder is waiting,
// so no case guesses at that with a timer.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobLockStore } from '../../storage/types.ts';

export interface BlobLockFixture {
  /** Two stores on one storage, as two processes would have them. */
  stores: [BlobLockStore, BlobLockStore];
  /** Resolves once `n` callers wait for a lock another holds. */
  waiting(n: number): Promise<void>;
  cleanup(): Promise<void>;
}

/** A promise the test settles: a holder's fn waits on it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Takes `key`'s lock on `store` and holds it until the returned gate opens; `held` resolves once it holds. */
function hold(store: BlobLockStore, key: string, log: string[], name: string) {
  const g = gate();
  let holding!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  const done = store.withBlobLock(key, async () => {
    log.push(`${name} in`);
    holding();
    await g.opened;
    log.push(`${name} out`);
    return name;
  });
  return { ...g, held, done };
}

export function blobLockStoreSuite(name: string, make: () => Promise<BlobLockFixture>): void {
  describe(`BlobLockStore conformance: ${name}`, () => {
    let f: BlobLockFixture;
    beforeEach(async () => {
      f = await make();
    });
    afterEach(() => f.cleanup());

    it("one store's holder keeps the other's caller of the same key waiting until it is done", async () => {
      const [a, b] = f.stores;
      const log: string[] = [];
      const first = hold(a, 'blake3/k', log, 'a');
      await first.held;
      const second = hold(b, 'blake3/k', log, 'b');
      await f.waiting(1);
      expect(log).toEqual(['a in']);
      first.open();
      await second.held;
      second.open();
      expect(await Promise.all([first.done, second.done])).toEqual(['a', 'b']);
      expect(log).toEqual(['a in', 'a out', 'b in', 'b out']);
    });

    it('holds within one store too', async () => {
      const [a] = f.stores;
      const log: string[] = [];
      const first = hold(a, 'blake3/k', log, 'one');
      await first.held;
      const second = hold(a, 'blake3/k', log, 'two');
      await f.waiting(1);
      first.open();
      second.open();
      await Promise.all([first.done, second.done]);
      expect(log).toEqual(['one in', 'one out', 'two in', 'two out']);
    });

    it('other keys do not wait', async () => {
      const [a, b] = f.stores;
      const held = hold(a, 'blake3/k1', [], 'a');
      await held.held;
      expect(await b.withBlobLock('blake3/k2', async () => 'free')).toBe('free');
      expect(await a.withBlobLock('blake3/k3', async () => 'free too')).toBe('free too');
      held.open();
      await held.done;
    });

    it("a holder's rejection passes through and lets go of the lock", async () => {
      const [a, b] = f.stores;
      const boom = new Error('boom');
      await expect(
        a.withBlobLock('blake3/k', async () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await b.withBlobLock('blake3/k', async () => 'next')).toBe('next');
      expect(await a.withBlobLock('blake3/k', async () => 'again')).toBe('again');
    });

    it('many holders at once, more than a backend keeps sessions for, all finish, one at a time per key', async () => {
      const [a, b] = f.stores;
      const inside = new Map<string, number>();
      let overlap = false;
      const work = (store: BlobLockStore, key: string) =>
        store.withBlobLock(key, async () => {
          const n = (inside.get(key) ?? 0) + 1;
          inside.set(key, n);
          if (n > 1) overlap = true;
          // Yields to I/O, so that the other holders' lock answers would come in here were the lock not held.
          for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
          inside.set(key, n - 1);
        });
      await Promise.all(Array.from({ length: 24 }, (_, i) => work(i % 2 ? a : b, `blake3/k${i % 6}`)));
      expect(overlap).toBe(false);
    });
  });
}
