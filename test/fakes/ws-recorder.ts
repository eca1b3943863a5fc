// A plain `ws` client for tests against the fake worker: records every frame
// (JSON parsed, binary kept with its 4-byte type) and waits for one.
import WebSocket from 'ws';

export interface RecordedFrame {
  type: string;
  data?: Record<string, unknown>;
  /** Binary frames: the payload after the 4-byte type. */
  bytes?: Uint8Array;
}

export interface WsRecorder {
  ws: WebSocket;
  frames: RecordedFrame[];
  /** JSON frames of one prompt (those whose data.prompt_id is it), in order. */
  ofPrompt(prompt_id: string): RecordedFrame[];
  waitFor(pred: (f: RecordedFrame) => boolean, timeoutMs?: number): Promise<RecordedFrame>;
  closed: Promise<{ code: number }>;
  close(): void;
}

export async function connectRecorder(wsUrl: string, clientId: string, opts: { featureFlags?: Record<string, unknown> } = {}): Promise<WsRecorder> {
  const ws = new WebSocket(`${wsUrl}?clientId=${encodeURIComponent(clientId)}`);
  const frames: RecordedFrame[] = [];
  const waiters: Array<{ pred: (f: RecordedFrame) => boolean; resolve: (f: RecordedFrame) => void }> = [];
  ws.on('message', (raw, isBinary) => {
    const buf = raw as Buffer;
    const frame: RecordedFrame = isBinary
      ? { type: `binary:${buf.readUInt32BE(0)}`, bytes: new Uint8Array(buf.subarray(4)) }
      : (JSON.parse(buf.toString('utf8')) as RecordedFrame);
    frames.push(frame);
    for (const w of [...waiters]) {
      if (w.pred(frame)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(frame);
      }
    }
  });
  const closed = new Promise<{ code: number }>((r) => ws.on('close', (code) => r({ code })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  if (opts.featureFlags) ws.send(JSON.stringify({ type: 'feature_flags', data: opts.featureFlags }));
  return {
    ws,
    frames,
    ofPrompt: (id) => frames.filter((f) => f.data?.prompt_id === id),
    waitFor(pred, timeoutMs = 10_000) {
      const seen = frames.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('timed out waiting for a frame')), timeoutMs);
        waiters.push({ pred, resolve: (f) => (clearTimeout(timer), resolve(f)) });
      });
    },
    closed,
    close: () => ws.close(),
  };
}
