// Webhooks of job events, received by a real HTTP server that verifies every
// request with the Standard Webhooks library: job.succeeded, job.failed and
// job.canceled delivered once each with the job's v2 view (jobs submitted
// through v2 and through the cloud /api/prompt), per-endpoint event filters,
// two endpoints sharing one event id, retries that keep the event id, 410
// Gone, the outbound guard, retention, and options refused at createService.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService, type Logger, type ServiceOptions } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import type { Storage } from '../storage/types.ts';
import { ISO } from './helpers/assets.ts';
import { postJson } from './helpers/cloud-jobs.ts';
import { type Harness, MODES, type Mode, startHarness } from './helpers/harness.ts';
import { cancelJob, expectJobShape, jobNow, saveImageWorkflow, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { createTestNodes, waitWorkflow } from './helpers/local-nodes.ts';
import { newSecret, startWebhookReceiver, verified, type WebhookReceiver, type WebhookRequest } from './helpers/webhook-receiver.ts';

/** Retries within a test's patience. */
const FAST = { initialDelayMs: 20, maxDelayMs: 100 };

const failWorkflow = () => ({
  n: { class_type: 'Number', inputs: { value: 1 } },
  f: { class_type: 'Fail', inputs: { value: ['n', 0] } },
  s: { class_type: 'Show', inputs: { value: ['f', 0] } },
});

function captureLogger(): Logger & { lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

const receivers: WebhookReceiver[] = [];
const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(options: Parameters<typeof startWebhookReceiver>[0] = {}): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(options);
  receivers.push(r);
  return r;
}

/** A service with the test nodes over SQLite, its storage at hand; the loopback receivers allowed unless said otherwise. */
async function start(mode: Mode, options: Partial<ServiceOptions>): Promise<Harness & { storage: Storage }> {
  let storage: Storage | undefined;
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] });
  const h = await startHarness(mode, { engine, allowPrivateUrls: true, webhookDelivery: FAST, ...options }, async (blobs, dir) => {
    storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs });
    return storage;
  });
  harnesses.push(h);
  return Object.assign(h, { storage: storage! });
}

const deliveries = (h: { storage: Storage }, subject: string) => h.storage.metadata.listWebhookDeliveries({ subject, limit: 10 });

/** Waits until every delivery of the job has ended (delivered or given up), and returns them. */
async function ended(h: { storage: Storage }, subject: string, count = 1) {
  await until(`${count} ended deliveries of ${subject}`, async () => {
    const rows = await deliveries(h, subject);
    return rows.length === count && rows.every((r) => r.state !== 'pending');
  });
  return deliveries(h, subject);
}

/** The Job as GET shows it, with the output links as a webhook carries them: relative to the service's host. */
function asWebhookData(job: any) {
  return {
    ...job,
    outputs: job.outputs.map((o: any) => ({
      ...o,
      url: expect.stringMatching(new RegExp(`^/api/v2/assets/${o.id}/content\\?`)),
      url_expires_at: expect.stringMatching(ISO),
    })),
  };
}

const byJob = (requests: WebhookRequest[]) => new Map(requests.map((r) => [r.json.data.id as string, r]));

describe.each(MODES)('webhooks (%s)', (mode) => {
  it('delivers job.succeeded once, signed, with the job as GET /api/v2/jobs/{id} shows it', async () => {
    const secret = newSecret();
    const r = await receiver();
    const h = await start(mode, { webhooks: [{ url: `${r.url}/hooks/graphrun?source=test`, secret }] });
    const job = await submitOk(h, saveImageWorkflow());
    const [request] = await r.waitFor(1);
    const event = verified(secret, request);
    expect(request.path).toBe('/hooks/graphrun?source=test');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('graphrun-webhooks');
    expect(request.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(event).toEqual({ type: 'job.succeeded', timestamp: expect.stringMatching(ISO), data: expect.any(Object) });
    const now = await jobNow(h, job.id);
    expect(now.status).toBe('succeeded');
    expect(now.outputs).toHaveLength(1);
    expect(event.data).toEqual(asWebhookData(now));
    // The event's time is the job's end.
    expect(Math.abs(Date.parse(event.timestamp) - Date.parse(now.completed_at))).toBeLessThan(1000);
    // The output's link, relative to the service (no publicBaseUrl), reads the bytes without credentials.
    const content = await h.fetch(event.data.outputs[0].url);
    expect(content.status).toBe(200);
    expect((await content.arrayBuffer()).byteLength).toBe(now.outputs[0].size_bytes);

    expect(await ended(h, job.id)).toEqual([
      expect.objectContaining({ state: 'delivered', attempts: 1, event_id: request.headers['webhook-id'], event_type: 'job.succeeded' }),
    ]);
    expect(r.received).toHaveLength(1);
  });

  it('with publicBaseUrl, the links of the job in the event are absolute, under it', async () => {
    const secret = newSecret();
    const r = await receiver();
    const h = await start(mode, { publicBaseUrl: 'https://graphrun.example.com/gr', webhooks: [{ url: r.url, secret }] });
    const job = await submitOk(h, saveImageWorkflow());
    const event = verified(secret, (await r.waitFor(1))[0]);
    expectJobShape(event.data, '/gr');
    expect(event.data.outputs[0].url).toMatch(
      new RegExp(`^https://graphrun\\.example\\.com/gr/api/v2/assets/${event.data.outputs[0].id}/content\\?`),
    );
    // The same view GET gives (publicBaseUrl names the address whole, so the links are the same).
    const now = await jobNow(h, job.id);
    expect(event.data).toEqual({ ...now, outputs: [{ ...now.outputs[0], url: expect.any(String), url_expires_at: expect.stringMatching(ISO) }] });
    expect(new URL(event.data.outputs[0].url).pathname).toBe(new URL(now.outputs[0].url).pathname);
  });

  it('delivers job.failed with the error and job.canceled of a canceled run, once each', async () => {
    const secret = newSecret();
    const r = await receiver();
    const h = await start(mode, { webhooks: [{ url: r.url, secret, events: ['*'] }] });
    const failing = await submitOk(h, failWorkflow());
    await waitForJob(h, failing.id, 'failed');
    const slow = await submitOk(h, waitWorkflow(7, 25, 400));
    await waitForJob(h, slow.id, 'running');
    await cancelJob(h, slow.id);
    await waitForJob(h, slow.id, 'canceled');
    const got = byJob(await r.waitFor(2));
    const failed = verified(secret, got.get(failing.id)!);
    expect(failed).toMatchObject({
      type: 'job.failed',
      data: { id: failing.id, status: 'failed', error: { code: 'node_execution_error', node_id: 'f' } },
    });
    expect(failed.data).toEqual(asWebhookData(await jobNow(h, failing.id)));
    const canceled = verified(secret, got.get(slow.id)!);
    expect(canceled).toMatchObject({ type: 'job.canceled', data: { id: slow.id, status: 'canceled', error: null } });
    expect(canceled.data).toEqual(asWebhookData(await jobNow(h, slow.id)));
    for (const id of [failing.id, slow.id]) expect((await ended(h, id))[0]).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(r.received).toHaveLength(2);
  });

  it('delivers the end of a job submitted through the cloud /api/prompt', async () => {
    const secret = newSecret();
    const r = await receiver();
    const h = await start(mode, { webhooks: [{ url: r.url, secret }] });
    const { res, body } = await postJson(h, '/api/prompt', { prompt: saveImageWorkflow(0x112233, 2, 2, 'cloud') });
    expect(res.status).toBe(200);
    const [request] = await r.waitFor(1);
    const event = verified(secret, request);
    expect(event).toMatchObject({ type: 'job.succeeded', data: { id: body.prompt_id, status: 'succeeded' } });
    expect(event.data).toEqual(asWebhookData(await jobNow(h, body.prompt_id)));
    expect(event.data.outputs).toEqual([expect.objectContaining({ node_id: 's', content_type: 'image/png' })]);
    expect((await ended(h, body.prompt_id))[0].state).toBe('delivered');
  });

  it('sends each endpoint the events it asked for: one event, one id, to both', async () => {
    const [a, b] = [await receiver(), await receiver()];
    const [secretA, secretB] = [newSecret(), newSecret()];
    const h = await start(mode, {
      webhooks: [
        { url: a.url, secret: secretA, events: ['job.failed'] },
        { url: b.url, secret: secretB },
      ],
    });
    const ok = await submitOk(h, saveImageWorkflow());
    await waitForJob(h, ok.id, 'succeeded');
    const bad = await submitOk(h, failWorkflow());
    await waitForJob(h, bad.id, 'failed');
    const [toA] = await a.waitFor(1);
    const toB = byJob(await b.waitFor(2));
    expect(verified(secretA, toA)).toMatchObject({ type: 'job.failed', data: { id: bad.id } });
    expect(verified(secretB, toB.get(ok.id)!)).toMatchObject({ type: 'job.succeeded', data: { id: ok.id } });
    expect(verified(secretB, toB.get(bad.id)!)).toMatchObject({ type: 'job.failed', data: { id: bad.id } });
    // One event: the same id at both endpoints, each signed with its own secret.
    expect(toA.headers['webhook-id']).toBe(toB.get(bad.id)!.headers['webhook-id']);
    expect(() => verified(secretB, toA)).toThrow();
    // The success was never meant for A: no row was written for it.
    expect((await ended(h, ok.id)).map((d) => d.endpoint)).toEqual([`${b.url}/`]);
    expect((await ended(h, bad.id, 2)).map((d) => d.endpoint).sort()).toEqual([`${a.url}/`, `${b.url}/`].sort());
    expect(a.received).toHaveLength(1);
  });

  it('retries a failing receiver with the same webhook-id until it answers 2xx', async () => {
    const secret = newSecret();
    const logger = captureLogger();
    const r = await receiver({ status: (n) => (n <= 2 ? 500 : 200) });
    const h = await start(mode, { logger, webhooks: [{ url: r.url, secret }] });
    const job = await submitOk(h, saveImageWorkflow());
    const requests = await r.waitFor(3);
    const ids = requests.map((q) => q.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    // Each try is signed anew (its own timestamp) over the same body.
    for (const q of requests) expect(verified(secret, q)).toMatchObject({ type: 'job.succeeded', data: { id: job.id } });
    expect(new Set(requests.map((q) => q.body)).size).toBe(1);
    expect(await ended(h, job.id)).toEqual([expect.objectContaining({ state: 'delivered', attempts: 3, event_id: ids[0] })]);
    const retries = logger.lines.filter((l) => l.message === 'webhook failed; retrying');
    expect(retries.map((l) => [l.fields?.attempt, l.fields?.error, l.fields?.job_id])).toEqual([
      [1, 'HTTP 500', job.id],
      [2, 'HTTP 500', job.id],
    ]);
    expect(r.received).toHaveLength(3);
  });

  it('gives an event up at once when the receiver answers 410 Gone, and after the configured tries otherwise', async () => {
    const secret = newSecret();
    const logger = captureLogger();
    const gone = await receiver({ status: () => 410 });
    const down = await receiver({ status: () => 503 });
    const h = await start(mode, {
      logger,
      webhooks: [
        { url: gone.url, secret },
        { url: down.url, secret },
      ],
      webhookDelivery: { ...FAST, attempts: 3 },
    });
    const job = await submitOk(h, saveImageWorkflow());
    const rows = await ended(h, job.id, 2);
    expect(rows.find((d) => d.endpoint === `${gone.url}/`)).toMatchObject({ state: 'dead', attempts: 1, last_error: 'HTTP 410' });
    expect(rows.find((d) => d.endpoint === `${down.url}/`)).toMatchObject({ state: 'dead', attempts: 3, last_error: 'HTTP 503' });
    expect(gone.received).toHaveLength(1);
    expect(down.received).toHaveLength(3);
    expect(logger.lines.filter((l) => l.message === 'webhook given up').map((l) => l.fields)).toEqual([
      expect.objectContaining({ job_id: job.id, endpoint: `${down.url}/`, attempts: 3, error: 'HTTP 503' }),
    ]);
    expect(logger.lines.some((l) => l.message === 'webhook given up: the receiver answered 410 Gone')).toBe(true);
  });

  it('refuses a loopback receiver through the outbound guard unless private URLs are allowed: given up, the reason logged', async () => {
    const secret = newSecret();
    const logger = captureLogger();
    const r = await receiver();
    const h = await start(mode, { logger, allowPrivateUrls: false, webhooks: [{ url: r.url, secret }] });
    expect(logger.lines).toContainEqual(
      expect.objectContaining({ message: 'webhook endpoint on a private address: its deliveries will be refused unless allowPrivateUrls is set' }),
    );
    const job = await submitOk(h, saveImageWorkflow());
    const [row] = await ended(h, job.id);
    expect(row).toMatchObject({
      state: 'dead',
      attempts: 1,
      last_error: expect.stringMatching(/^refusing to fetch 127\.0\.0\.1:\d+: it is a loopback address/),
    });
    expect(logger.lines).toContainEqual({
      level: 'warn',
      message: 'webhook refused by the outbound guard',
      fields: { event_id: row.event_id, event_type: 'job.succeeded', job_id: job.id, endpoint: `${r.url}/`, error: row.last_error },
    });
    expect(r.received).toEqual([]);
  });

  it('the sweep removes deliveries that ended longer ago than their retention', async () => {
    const r = await receiver();
    const h = await start(mode, { webhooks: [{ url: r.url, secret: newSecret() }], webhookDelivery: { ...FAST, retentionSeconds: 0.001 } });
    const job = await submitOk(h, saveImageWorkflow());
    expect((await ended(h, job.id))[0].state).toBe('delivered');
    await until('a millisecond past the end', async () => Date.now() > ((await deliveries(h, job.id))[0].ended_at ?? 0) + 1);
    await h.service.sweep();
    expect(await deliveries(h, job.id)).toEqual([]);
  });
});

describe('webhook options', () => {
  const open = (options: Partial<ServiceOptions>) => createService({ storage: createMemoryStorage(), sweepIntervalMs: 0, ...options });
  const url = 'https://hooks.example.com/graphrun';
  const secret = newSecret();

  it.each([
    [[{ url: 'ftp://hooks.example.com/x', secret }], /^webhooks\[0\]\.url must be an http\(s\) URL, got "ftp:\/\/hooks\.example\.com\/x"$/],
    [[{ url: 'not a url', secret }], /webhooks\[0\]\.url must be an http\(s\) URL, got "not a url"/],
    [[{ url, secret: 'hunter2' }], /^webhooks\[0\]\.secret must be "whsec_" followed by the base64 of 24 to 64 random bytes/],
    [[{ url, secret: 'whsec_c2hvcnQ=' }], /^webhooks\[0\]\.secret decodes to 5 bytes: it must be "whsec_" followed by the base64/],
    [[{ url, secret: 'whsec_not base64!' }], /^webhooks\[0\]\.secret is not base64 after "whsec_"/],
    [
      [{ url, secret, events: ['job.done'] }],
      /^webhooks\[0\]\.events: unknown event "job\.done"; known: job\.succeeded, job\.failed, job\.canceled, or "\*" for all$/,
    ],
    [[{ url, secret, events: [] }], /^webhooks\[0\]\.events must list events/],
    [[{ url: `${url}?${'x'.repeat(2048)}`, secret }], /^webhooks\[0\]\.url must be at most 2048 characters long$/],
    [
      [
        { url, secret },
        { url, secret: newSecret() },
      ],
      /^webhooks\[1\]\.url: https:\/\/hooks\.example\.com\/graphrun is listed twice/,
    ],
  ] as const)('refuses %j at createService', async (webhooks, message) => {
    await expect(open({ webhooks: webhooks as unknown as ServiceOptions['webhooks'] })).rejects.toThrow(message);
  });

  it('refuses bad delivery settings and a bad video callback secret', async () => {
    await expect(open({ webhookDelivery: { attempts: 0 } })).rejects.toThrow('webhookDelivery.attempts must be a positive whole number, got 0');
    await expect(open({ webhookDelivery: { initialDelayMs: 5000, maxDelayMs: 10 } })).rejects.toThrow(
      'webhookDelivery.maxDelayMs must not be below webhookDelivery.initialDelayMs',
    );
    await expect(open({ videoCallbacks: { secret: 'plain' } })).rejects.toThrow(/^videoCallbacks\.secret must be "whsec_"/);
    // An explicit undefined is the default; a value that is not a positive number is refused, not turned into a NaN lease.
    await (await open({ videoCallbacks: { timeoutMs: undefined } })).close();
    await expect(open({ videoCallbacks: { timeoutMs: Number.NaN } })).rejects.toThrow('videoCallbacks.timeoutMs must be a positive number, got NaN');
    await expect(open({ videoCallbacks: { attempts: 1.5 } })).rejects.toThrow('videoCallbacks.attempts must be a positive whole number, got 1.5');
  });

  it('takes good ones: events by name or "*", a secret of 24 to 64 bytes', async () => {
    const service = await open({
      webhooks: [
        { url, secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}`, events: ['job.failed', 'job.canceled'] },
        { url: 'http://hooks.example.com:8080/b', secret: `whsec_${Buffer.alloc(64, 2).toString('base64')}`, events: ['*'] },
      ],
      videoCallbacks: { secret },
    });
    await service.close();
  });
});
