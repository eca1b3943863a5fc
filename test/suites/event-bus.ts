// The one conformance suite every EventBus runs (PostgreSQL LISTEN/NOTIFY so
// far). Each test gets two buses on one shared transport from `make`: two
// instances of the service on one storage. Every wait is for a message or a
// callback; a bound only turns a missing one into a failure.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventBus } from '../../storage/types.ts';

export interface EventBusPair {
  a: EventBus;
  b: EventBus;
  cleanup(): Promise<void>;
}

export interface Inbox {
  messages: string[];
  /** Times onLive was called. */
  lives: number;
  /** Resolves once `n` messages have arrived. */
  received(n: number): Promise<string[]>;
  /** Resolves once onLive has been called `n` times. */
  live(n?: number): Promise<void>;
  stop(): void;
}

const BOUND_MS = 10_000;

/** Subscribes `channel` on `bus`, keeping what arrives. */
export function inbox(bus: EventBus, channel: string): Inbox {
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const until = (what: string, done: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${channel}: no ${what} within ${BOUND_MS} ms; got ${JSON.stringify(box.messages)}`)),
        BOUND_MS,
      );
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  const box: Inbox = {
    messages: [],
    lives: 0,
    received: (n) => until(`${n} messages`, () => box.messages.length >= n).then(() => box.messages.slice(0, n)),
    live: (n = 1) => until(`onLive #${n}`, () => box.lives >= n),
    stop: bus.subscribe(
      channel,
      (payload) => {
        box.messages.push(payload);
        wake();
      },
      () => {
        box.lives++;
        wake();
      },
    ),
  };
  return box;
}

/** A payload well over PostgreSQL's 8000-byte NOTIFY bound, different at every position (a base64 preview, say). */
export const largePayload = (chars: number, seed = 1) => {
  let out = '';
  let x = seed;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < chars; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += alphabet[x >>> 26];
  }
  return out;
};

export function eventBusSuite(name: string, make: () => Promise<EventBusPair>): void {
  describe(`event bus conformance: ${name}`, () => {
    let pair: EventBusPair;
    beforeEach(async () => {
      pair = await make();
    });
    afterEach(async () => {
      await pair.cleanup();
    });

    it("delivers one instance's messages to the other's subscribers of the channel, in order and intact", async () => {
      const { a, b } = pair;
      const box = inbox(b, 'job:1');
      await box.live();
      const sent = ['one', 'two: ünïcødé ✓ "quoted" \\ back', '{"v":1,"e":[{"type":"status"}]}\nsecond line', ''];
      for (const m of sent) await a.publish('job:1', m);
      expect(await box.received(sent.length)).toEqual(sent);
    });

    it('never hands an instance its own messages', async () => {
      const { a, b } = pair;
      const [boxA, boxB] = [inbox(a, 'account:x'), inbox(b, 'account:x')];
      await Promise.all([boxA.live(), boxB.live()]);
      await a.publish('account:x', 'from a');
      await b.publish('account:x', 'from b');
      // Each heard the other's message; its own, sent before or after, never came.
      expect(await boxA.received(1)).toEqual(['from b']);
      expect(await boxB.received(1)).toEqual(['from a']);
      await a.publish('account:x', 'from a again');
      expect(await boxB.received(2)).toEqual(['from a', 'from a again']);
      expect(boxA.messages).toEqual(['from b']);
    });

    it('keeps channels apart', async () => {
      const { a, b } = pair;
      // Any text names a channel: quotes, spaces and all.
      const [one, two] = [inbox(b, 'job:one'), inbox(b, `account:o'brien "two"`)];
      await Promise.all([one.live(), two.live()]);
      await a.publish(`account:o'brien "two"`, 'for two');
      await a.publish('job:one', 'for one');
      expect(await one.received(1)).toEqual(['for one']);
      expect(two.messages).toEqual(['for two']);
    });

    it('stops delivering to a listener once it unsubscribed, and to a channel nobody listens to any more', async () => {
      const { a, b } = pair;
      const [first, second] = [inbox(b, 'job:u'), inbox(b, 'job:u')];
      await Promise.all([first.live(), second.live()]);
      first.stop();
      await a.publish('job:u', 'm1');
      expect(await second.received(1)).toEqual(['m1']);
      expect(first.messages).toEqual([]);

      second.stop();
      const other = inbox(b, 'job:v');
      await other.live();
      await a.publish('job:u', 'nobody hears this');
      await a.publish('job:v', 'm2');
      expect(await other.received(1)).toEqual(['m2']);
      expect(second.messages).toEqual(['m1']);
    });

    it('tells a later subscriber of a channel already heard that it is live, and it hears what follows', async () => {
      const { a, b } = pair;
      const early = inbox(b, 'account:y');
      await early.live();
      const late = inbox(b, 'account:y');
      await late.live();
      expect(late.lives).toBe(1);
      await a.publish('account:y', 'after both');
      expect(await late.received(1)).toEqual(['after both']);
      expect(await early.received(1)).toEqual(['after both']);
    });

    it('carries payloads over the transport limit intact, in order with small ones around them', async () => {
      const { a, b } = pair;
      const box = inbox(b, 'job:big');
      await box.live();
      // 100,000 base64 characters; and 3,000 euro signs: fewer than 8,000 characters, 9,000 bytes.
      const sent = ['small before', largePayload(100_000), '€'.repeat(3000), 'small after', largePayload(7990, 7)];
      for (const m of sent) await a.publish('job:big', m);
      const got = await box.received(sent.length);
      expect(got.map((m) => m.length)).toEqual(sent.map((m) => m.length));
      expect(got).toEqual(sent);
    });

    it('refuses to publish or subscribe once closed, and closing twice is harmless', async () => {
      const { a } = pair;
      await a.close();
      await a.close();
      await expect(a.publish('job:1', 'late')).rejects.toThrow();
      expect(() => a.subscribe('job:1', () => {})).toThrow();
    });
  });
}
