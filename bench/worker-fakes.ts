// Child process of bench/worker.ts: the engine workers, as fake engine
// servers (test/fakes/comfyui-worker.ts) speaking the reference protocol and
// running prompts for real, one at a time each. They live apart from graphrun's
// server, as workers do in a deployment; both measured paths use these same ones.
import { type FakeWorker, startFakeWorker } from '../test/fakes/comfyui-worker.ts';

export type FakesMessage =
  | { type: 'ready'; urls: string[] }
  /** Prompts each worker has accepted so far, in the order of `urls`. */
  | { type: 'counts'; prompts: number[] }
  | { type: 'error'; message: string };
export type FakesRequest = { type: 'counts' } | { type: 'stop' };

const count = Number(process.argv[2] ?? 2);
if (!(count >= 1) || !process.send) throw new Error('run by bench/worker.ts: fork with IPC; argv: the number of workers');
const send = (message: FakesMessage) => process.send!(message);

let workers: FakeWorker[] = [];
try {
  workers = await Promise.all(Array.from({ length: count }, () => startFakeWorker()));
  send({ type: 'ready', urls: workers.map((w) => w.url) });
} catch (err) {
  send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
}

process.on('message', async (message: FakesRequest) => {
  if (message.type === 'counts') {
    send({ type: 'counts', prompts: workers.map((w) => w.submissions.length) });
  } else if (message.type === 'stop') {
    await Promise.all(workers.map((w) => w.close()));
    process.exit(0);
  }
});
