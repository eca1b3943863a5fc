// A Web Worker's entry (Bun, Deno, browsers): the thread side of the local
// engine over the worker's global postMessage and message events.
import type { ToThread } from './protocol.ts';
import { serveThread } from './serve.ts';

const scope = globalThis as unknown as {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: { data: ToThread }) => void): void;
};

serveThread({
  post: (message) => scope.postMessage(message),
  listen: (onMessage) => scope.addEventListener('message', (event) => onMessage(event.data)),
});
