// The webhook outbox survives a restart: a job ends while its receiver is
// down, the tries fail and the service closes with the delivery pending; a
// new service on the same SQLite file starts, the receiver comes up on its
// address, and the delivery arrives, signed, with the event id it had from
// the start. A video task's callback pending at close is sent by the next
// start the same way.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService, type Logger, type Service, type ServiceOptions } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import type { Storage } from '../storage/types.ts';
import { freePort } from './helpers/free-port.ts';
import { saveImageWorkflow, until } from './helpers/jobs.ts';
import { createTestNodes } from './helpers/local-nodes.ts';
import { multiframe } from './helpers/video.ts';
import { newSecret, startWebhookReceiver, verified, type WebhookReceiver } from './helpers/webhook-receiver.ts';

function captureLogger(): Logger & { lines: Array<{ message: string; fields?: Record<string, unknown> }> } {
  const lines: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  const at = (message: string, fields?: Record<string, unknown>) => void lines.push({ message, fields });
  return { lines, info: at, warn: at, error: at };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-webhooks-durable-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** A service on the SQLite file `name` under the test directory; its storage at hand. */
async function startService(name: string, options: Partial<ServiceOptions>): Promise<{ service: Service; storage: Storage }> {
  const blobs = await createFsBlobStore({ dir: join(dir, name, 'blobs') });
  const storage = await createSqliteStorage({ filename: join(dir, `${name}.db`), blobs });
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] });
  const service = await createService({ storage, engine, sweepIntervalMs: 0, allowPrivateUrls: true, ...options });
  return { service, storage };
}

const call = (service: Service, path: string, body: unknown) =>
  service.fetch(
    new Request(`http://graphrun.test${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  );

describe('a durable webhook outbox', () => {
  it('delivers a job event after a restart when the receiver was down while the job ended', async () => {
    const secret = newSecret();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hooks`;
    const options = { webhooks: [{ url, secret }], webhookDelivery: { initialDelayMs: 20, maxDelayMs: 200 } };
    const logger = captureLogger();
    const first = await startService('jobs', { ...options, logger });
    const submitted = await call(first.service, '/api/v2/jobs', { workflow: saveImageWorkflow() });
    expect(submitted.status).toBe(201);
    const job = (await submitted.json()) as { id: string };
    const rows = () => first.storage.metadata.listWebhookDeliveries({ subject: job.id, limit: 10 });
    // Written with the job's end, and tried against the closed port (twice: a retry was due too).
    await until('two failed tries', async () => ((await rows())[0]?.attempts ?? 0) >= 2);
    const [pending] = await rows();
    expect(pending).toMatchObject({
      state: 'pending',
      event_type: 'job.succeeded',
      last_error: expect.stringContaining('could not reach 127.0.0.1'),
    });
    expect(logger.lines.some((l) => l.message === 'webhook failed; retrying' && l.fields?.job_id === job.id)).toBe(true);
    await first.service.close();

    const second = await startService('jobs', options);
    open.push(second.service);
    const receiver: WebhookReceiver = await startWebhookReceiver({ port });
    open.push(receiver);
    const [request] = await receiver.waitFor(1);
    expect(request.path).toBe('/hooks');
    expect(request.headers['webhook-id']).toBe(pending.event_id);
    expect(verified(secret, request)).toMatchObject({ type: 'job.succeeded', data: { id: job.id, status: 'succeeded' } });
    await until(
      'delivered',
      async () => (await second.storage.metadata.listWebhookDeliveries({ subject: job.id, limit: 10 }))[0]?.state === 'delivered',
    );
    expect(receiver.received).toHaveLength(1);
  });

  it("sends a video task's callback left pending at close from the next start", async () => {
    const port = await freePort();
    const callbackUrl = `http://127.0.0.1:${port}/video`;
    const options = { videoCallbacks: { initialDelayMs: 20, maxDelayMs: 200, attempts: 1000 } };
    const first = await startService('video', options);
    const created = (await (await call(first.service, '/proxy/videogen/multiframe', multiframe({ callback_url: callbackUrl }))).json()) as any;
    const rows = () => first.storage.metadata.listWebhookDeliveries({ subject: created.task_id, limit: 10 });
    await until('the task ended and its three callbacks are written', async () => (await rows()).length === 3, 20_000);
    await until('a failed try of the first', async () => ((await rows())[0]?.attempts ?? 0) >= 1);
    await first.service.close();

    const second = await startService('video', options);
    open.push(second.service);
    const left = await second.storage.metadata.listWebhookDeliveries({ subject: created.task_id, limit: 10 });
    expect(left.map((r) => [r.event_type, r.state])).toEqual([
      ['queueing', 'pending'],
      ['processing', 'pending'],
      ['success', 'pending'],
    ]);
    const receiver = await startWebhookReceiver({ port });
    open.push(receiver);
    const got = await receiver.waitFor(3);
    // In order, the record as each change made it; the last with the output.
    expect(got.map((r) => r.json.state)).toEqual(['queueing', 'processing', 'success']);
    for (const r of got) expect(r.json).toMatchObject({ task_id: created.task_id, callback_url: callbackUrl });
    expect(got[2].json.output).toMatchObject({ content_type: 'image/apng' });
    // Unsigned without videoCallbacks.secret, yet with the id a receiver dedups on.
    expect(got.map((r) => r.headers['webhook-signature'])).toEqual([undefined, undefined, undefined]);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(3);
  });
});
