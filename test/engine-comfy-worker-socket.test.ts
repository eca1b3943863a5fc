// The worker engine's socket to one engine server: what it hands the pool of
// the server's text frames. Messages no job reads (`progress_state`, `status`)
// are dropped unparsed when written as the server writes them; everything else
// reaches onMessage parsed, whatever its key order or spacing.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { openWorkerSocket, type WorkerSocket } from '../engine/comfyui/worker-socket.ts';

let server: WebSocketServer | undefined;
let socket: WorkerSocket | undefined;
afterEach(async () => {
  socket?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = socket = undefined;
});

describe('worker socket', () => {
  it('drops progress_state and status unread, and hands over every other message in order', async () => {
    const frames = [
      // As the engine server writes them (Python's json.dumps: `type` first, a space after each colon).
      '{"type": "status", "data": {"status": {"exec_info": {"queue_remaining": 1}}, "sid": "c"}}',
      '{"type": "execution_start", "data": {"prompt_id": "p", "timestamp": 1}}',
      '{"type": "progress_state", "data": {"prompt_id": "p", "nodes": {}}}',
      '{"type":"executing","data":{"node":"1","display_node":"1","prompt_id":"p"}}',
      // Key order the server does not use: parsed and handed over (the job maps it to nothing).
      '{"data": {"prompt_id": "p", "nodes": {}}, "type": "progress_state"}',
      '{"type": "status_report", "data": {"n": 1}}',
      '{"type": "executing", "data": {"node": null, "prompt_id": "p"}}',
    ];
    server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    server.on('connection', (ws) => {
      for (const f of frames) ws.send(f);
    });
    await new Promise((resolve) => server!.once('listening', resolve));
    const got: Array<{ type: string; data: Record<string, unknown> }> = [];
    const done = new Promise<void>((resolve) => {
      socket = openWorkerSocket({
        url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`,
        clientId: 'c',
        handlers: {
          onMessage(msg) {
            got.push(msg);
            if (msg.type === 'executing' && msg.data.node === null) resolve();
          },
          onBinary() {},
          onUp() {},
          onDown() {},
        },
      });
    });
    await done;
    expect(got.map((m) => m.type)).toEqual(['execution_start', 'executing', 'progress_state', 'status_report', 'executing']);
    expect(got[1].data).toEqual({ node: '1', display_node: '1', prompt_id: 'p' });
  });
});
