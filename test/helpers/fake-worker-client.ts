// Plain clients of one fake engine worker, for the fake's own tests: JSON
// requests, a recorded WebSocket per client id, a submit that must be
// accepted, and the wait for a prompt's final `executing {node: null}`.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Workflow } from '../../engine/types.ts';
import type { FakeWorker } from '../fakes/comfyui-worker.ts';
import { connectRecorder, type WsRecorder } from '../fakes/ws-recorder.ts';

export interface FakeWorkerClient {
  post(path: string, body: unknown): Promise<Response>;
  /** A response body, read as the loose JSON the tests check field by field. */
  getJson(path: string): Promise<any>;
  /** A WebSocket client, once the worker's status (and feature_flags answer) came. */
  connect(id?: string, featureFlags?: Record<string, unknown>): Promise<{ id: string; r: WsRecorder }>;
  submit(prompt: Workflow, client_id: string, extra?: Record<string, unknown>): Promise<{ prompt_id: string; number: number }>;
  ended(r: WsRecorder, prompt_id: string): Promise<unknown>;
  close(): void;
}

export function fakeWorkerClient(w: FakeWorker): FakeWorkerClient {
  const open: WsRecorder[] = [];
  const post = (path: string, body: unknown) =>
    fetch(`${w.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return {
    post,
    getJson: async (path) => (await fetch(`${w.url}${path}`)).json(),
    async connect(id = randomUUID(), featureFlags) {
      const r = await connectRecorder(w.wsUrl, id, { featureFlags });
      open.push(r);
      await r.waitFor((f) => f.type === 'status');
      if (featureFlags) await r.waitFor((f) => f.type === 'feature_flags');
      return { id, r };
    },
    async submit(prompt, client_id, extra = {}) {
      const res = await post('/prompt', { prompt, client_id, ...extra });
      expect(res.status).toBe(200);
      return (await res.json()) as { prompt_id: string; number: number };
    },
    ended: (r, prompt_id) => r.waitFor((f) => f.type === 'executing' && f.data?.node === null && f.data?.prompt_id === prompt_id),
    close() {
      for (const r of open) r.close();
    },
  };
}
