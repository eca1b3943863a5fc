// Webhooks with two instances on one PostgreSQL database (test/helpers/postgres.ts
// starts the server): an API-only instance takes the jobs, a runner runs
// them and writes their events, and both senders look for due deliveries
// every few milliseconds. The receiver fails each event's first try, so the
// retries are due while both look: every try is claimed by one of them only,
// so each event arrives exactly twice (the failed try and the good one),
// always signed and with its one id.
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService, type Service, type ServiceOptions, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import type { Storage } from '../storage/types.ts';
import { until } from './helpers/jobs.ts';
import { createTestNodes, sumWorkflow } from './helpers/local-nodes.ts';
import { usePostgres } from './helpers/postgres.ts';
import { newSecret, startWebhookReceiver, verified, type WebhookReceiver } from './helpers/webhook-receiver.ts';

const server = usePostgres();

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function instance(
  connectionString: string,
  blobs: Storage['blobs'],
  options: Partial<ServiceOptions>,
): Promise<{ service: Service; storage: Storage }> {
  const storage = await createPostgresStorage({ connectionString, blobs });
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] });
  const service = await createService({ storage, engine, logger: silentLogger, sweepIntervalMs: 0, allowPrivateUrls: true, ...options });
  open.push(service);
  return { service, storage };
}

describe('webhooks on PostgreSQL, two instances', () => {
  it('sends each try once whichever instance claims it: a failed first try, then the delivery, per event', async () => {
    const secret = newSecret();
    const failedOnce = new Set<string>();
    const receiver: WebhookReceiver = await startWebhookReceiver({
      status: (_n, request) => {
        const id = String(request.headers['webhook-id']);
        if (failedOnce.has(id)) return 200;
        failedOnce.add(id);
        return 503;
      },
    });
    open.push(receiver);
    const connectionString = await server.newDatabase();
    const blobs = createMemoryBlobStore();
    const options = { webhooks: [{ url: receiver.url, secret }], webhookDelivery: { initialDelayMs: 30, maxDelayMs: 30, pollIntervalMs: 5 } };
    const api = await instance(connectionString, blobs, { ...options, runJobs: false });
    await instance(connectionString, blobs, options);

    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await api.service.fetch(
        new Request('http://graphrun.test/api/v2/jobs', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ workflow: sumWorkflow('n', i, 1) }),
        }),
      );
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const rows = async () => (await Promise.all(ids.map((id) => api.storage.metadata.listWebhookDeliveries({ subject: id, limit: 10 })))).flat();
    await until('every event delivered', async () => (await rows()).filter((r) => r.state === 'delivered').length === ids.length, 20_000);

    const delivered = await rows();
    expect(delivered.map((r) => r.attempts)).toEqual([2, 2, 2, 2]);
    expect(receiver.received).toHaveLength(8);
    for (const row of delivered) {
      const tries = receiver.received.filter((r) => r.headers['webhook-id'] === row.event_id);
      expect(tries.map((t) => verified(secret, t).data.id)).toEqual([row.subject, row.subject]);
    }
  });
});
