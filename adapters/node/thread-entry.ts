// A worker_threads entry: the thread side of the local engine over the
// parent port.
import { parentPort } from 'node:worker_threads';
import type { ToThread } from '../../engine/local/thread/protocol.ts';
import { serveThread } from '../../engine/local/thread/serve.ts';

const port = parentPort;
if (!port) throw new Error('thread-entry runs in a worker thread');
serveThread({
  post: (message) => port.postMessage(message),
  listen: (onMessage) => port.on('message', (data: ToThread) => onMessage(data)),
});
