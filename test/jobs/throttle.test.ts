// The progress throttle: leading push at once (or, started closed, at the end of
// the first window), then at most one per window,
// the newest pending value always delivered, flush and cancel on demand.
import { describe, expect, it } from 'vitest';
import { createThrottle, type ThrottleClock } from '../../core/jobs/throttle.ts';

/** A manual clock: timers fire only when the test advances time. */
function fakeClock() {
  let now = 0;
  let nextId = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: ThrottleClock = {
    now: () => now,
    setTimeout(fn, ms) {
      const id = nextId++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
  };
  function advance(ms: number) {
    const until = now + ms;
    for (;;) {
      const due = [...timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      timers.delete(due[0]);
      now = due[1].at;
      due[1].fn();
    }
    now = until;
  }
  return { clock, advance, pendingTimers: () => timers.size };
}

function setup(intervalMs?: number, startClosed?: boolean) {
  const fake = fakeClock();
  const got: Array<[number, number]> = [];
  const throttle = createThrottle<number>((v) => got.push([fake.clock.now(), v]), { clock: fake.clock, intervalMs, startClosed });
  return { ...fake, got, throttle };
}

describe('createThrottle', () => {
  it('delivers the first push at once', () => {
    const { throttle, got } = setup();
    throttle.push(1);
    expect(got).toEqual([[0, 1]]);
    expect(throttle.pending).toBe(false);
  });

  it('holds later pushes and delivers only the latest at the end of the window', () => {
    const { throttle, got, advance } = setup();
    throttle.push(1);
    advance(100);
    throttle.push(2);
    advance(100);
    throttle.push(3);
    expect(got).toEqual([[0, 1]]);
    expect(throttle.pending).toBe(true);
    advance(299);
    expect(got).toEqual([[0, 1]]);
    advance(1);
    expect(got).toEqual([
      [0, 1],
      [500, 3],
    ]);
    expect(throttle.pending).toBe(false);
  });

  it('keeps about two deliveries per second under a steady stream', () => {
    const { throttle, got, advance } = setup();
    for (let i = 0; i < 100; i++) {
      throttle.push(i);
      advance(20);
    }
    advance(1000);
    // 2000 ms of pushes: one leading delivery, then one per 500 ms window.
    expect(got.length).toBeLessThanOrEqual(5);
    expect(got.at(-1)![1]).toBe(99);
    for (let i = 1; i < got.length; i++) expect(got[i][0] - got[i - 1][0]).toBeGreaterThanOrEqual(500);
  });

  it('sends at once again after a quiet window', () => {
    const { throttle, got, advance } = setup();
    throttle.push(1);
    advance(600);
    throttle.push(2);
    expect(got).toEqual([
      [0, 1],
      [600, 2],
    ]);
  });

  it('measures the window from the last delivery, including timer ones', () => {
    const { throttle, got, advance } = setup();
    throttle.push(1);
    advance(10);
    throttle.push(2); // delivered at 500
    advance(490);
    expect(got.at(-1)).toEqual([500, 2]);
    advance(100);
    throttle.push(3); // 600: still within 500..1000
    expect(got.length).toBe(2);
    advance(400);
    expect(got.at(-1)).toEqual([1000, 3]);
  });

  it('flush delivers the pending value immediately and restarts the window', () => {
    const { throttle, got, advance, pendingTimers } = setup();
    throttle.push(1);
    advance(100);
    throttle.push(2);
    throttle.flush();
    expect(got).toEqual([
      [0, 1],
      [100, 2],
    ]);
    expect(pendingTimers()).toBe(0);
    throttle.flush(); // nothing pending: no delivery
    expect(got.length).toBe(2);
    throttle.push(3);
    expect(got.length).toBe(2);
    advance(500);
    expect(got.at(-1)).toEqual([600, 3]);
  });

  it('cancel drops the pending value and its timer', () => {
    const { throttle, got, advance, pendingTimers } = setup();
    throttle.push(1);
    throttle.push(2);
    throttle.cancel();
    expect(throttle.pending).toBe(false);
    expect(pendingTimers()).toBe(0);
    advance(1000);
    expect(got).toEqual([[0, 1]]);
    throttle.push(3);
    expect(got.at(-1)).toEqual([1000, 3]);
  });

  it('honours a custom interval', () => {
    const { throttle, got, advance } = setup(100);
    throttle.push(1);
    throttle.push(2);
    advance(100);
    expect(got).toEqual([
      [0, 1],
      [100, 2],
    ]);
  });

  it('runs on real timers by default', async () => {
    const got: number[] = [];
    const throttle = createThrottle<number>((v) => got.push(v), { intervalMs: 20 });
    throttle.push(1);
    throttle.push(2);
    expect(got).toEqual([1]);
    await new Promise((r) => setTimeout(r, 60));
    expect(got).toEqual([1, 2]);
  });

  describe('startClosed: the first window starts when the throttle is made', () => {
    it('holds the first push until that window ends, then delivers the latest', () => {
      const { throttle, got, advance } = setup(500, true);
      advance(100);
      throttle.push(1);
      throttle.push(2);
      expect(got).toEqual([]);
      expect(throttle.pending).toBe(true);
      advance(399);
      expect(got).toEqual([]);
      advance(1);
      expect(got).toEqual([[500, 2]]);
      throttle.push(3);
      advance(499);
      expect(got).toEqual([[500, 2]]);
      advance(1);
      expect(got).toEqual([
        [500, 2],
        [1000, 3],
      ]);
    });

    it('delivers at once a push that comes after the first window', () => {
      const { throttle, got, advance } = setup(500, true);
      advance(600);
      throttle.push(1);
      expect(got).toEqual([[600, 1]]);
    });

    it('a cancel before the window ends delivers nothing', () => {
      const { throttle, got, advance, pendingTimers } = setup(500, true);
      throttle.push(1);
      throttle.cancel();
      advance(1000);
      expect(got).toEqual([]);
      expect(pendingTimers()).toBe(0);
    });

    it('with no interval, delivers at once', () => {
      const { throttle, got } = setup(0, true);
      throttle.push(1);
      expect(got).toEqual([[0, 1]]);
    });
  });
});
