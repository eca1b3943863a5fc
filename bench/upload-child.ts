// What both servers of bench/upload.ts (the service, and the bare writer it
// is measured against) do alike as its child processes: sample their own RSS
// every 10 ms, so each figure belongs to the server alone, and answer the
// parent's reset, stats and stop messages over IPC.
export type ServerMessage = { type: 'ready'; url: string; rss: number } | { type: 'stats'; before: number; peak: number; now: number };
export type ParentMessage = { type: 'reset' } | { type: 'stats' } | { type: 'stop' };

/** Announces `url` to the parent and serves its messages until it says stop (then `stop()`, then exit). */
export function serveParent(url: string, stop: () => Promise<void>): void {
  if (!process.send) throw new Error('run by bench/upload.ts: fork with IPC');
  const send = (message: ServerMessage) => process.send!(message);
  let before = process.memoryUsage.rss();
  let peak = before;
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage.rss());
  };
  setInterval(sample, 10);
  process.on('message', async (message: ParentMessage) => {
    if (message.type === 'reset') {
      // The baseline is taken after warm-up, so one-time costs (wasm, JIT) are not counted as growth.
      before = peak = process.memoryUsage.rss();
      send({ type: 'stats', before, peak, now: before });
    } else if (message.type === 'stats') {
      sample();
      send({ type: 'stats', before, peak, now: process.memoryUsage.rss() });
    } else if (message.type === 'stop') {
      await stop();
      process.exit(0);
    }
  });
  send({ type: 'ready', url, rss: before });
}
