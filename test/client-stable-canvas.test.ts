// @stable-canvas/comfyui-client (Client) driven against a real graphrun
// server as its users drive a ComfyUI server: connect over /ws, node
// definitions and model lists, an upload used by LoadImage, enqueue with
// progress and its image results, enqueue_polling, queue and history,
// deleting a pending prompt and interrupting the running one, a refused
// workflow and a node failing, and an API key (header on HTTP, `token` on /ws).
import { Client, HttpError, Plugin, plugins, type WorkflowOutput } from '@stable-canvas/comfyui-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { makePng } from './helpers/cloud-files.ts';
import {
  type ClientServer,
  expectSolidPng,
  heldFailingWorkflow,
  heldImageWorkflow,
  heldInvertWorkflow,
  heldValueWorkflow,
  rgbOf,
  startClientServer,
  UNKNOWN_NODE_WORKFLOW,
  within,
} from './helpers/comfy-clients.ts';

/**
 * Says when the client starts waiting for a prompt's /ws events: enqueue
 * subscribes only once POST /prompt has answered, so a held job is let go
 * after that, not before.
 */
class WaitSignal extends Plugin {
  private waiters: Array<() => void> = [];
  constructor() {
    super();
    this.addHook({
      type: 'function',
      name: 'waitForPromptWebSocket',
      fn: (original, ...args) => {
        // The original subscribes before it returns its promise.
        const waiting = original(...args);
        for (const resolve of this.waiters.splice(0)) resolve();
        return waiting;
      },
    });
  }
  /** Resolves at the client's next wait for a prompt. */
  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** enqueue() of a job held at gate `key`, let go once both the client waits and the job holds. */
async function enqueueHeld(s: ClientServer, signal: WaitSignal, key: string, run: () => Promise<WorkflowOutput>) {
  const waiting = signal.next();
  const output = run();
  // A refusal or failure before the wait must end the test, not the bound.
  await within('the client to wait for the job', Promise.race([Promise.all([waiting, s.gates.reached(key)]), output]));
  s.gates.open(key);
  return within('the job to end', output);
}

const bytesAt = async (fetcher: typeof fetch, url: string) => new Uint8Array(await (await fetcher(url)).arrayBuffer());
/** queuePrompt's prompt id; its declared result also admits the error body, which a 400 never reaches (fetchApi throws). */
async function queued(client: Client, prompt: Record<string, unknown>): Promise<string> {
  const result = await client.queuePrompt(0, { prompt, workflow: {} });
  if (!('prompt_id' in result)) throw new Error(`not queued: ${JSON.stringify(result)}`);
  return result.prompt_id;
}

const urlsOf = (out: WorkflowOutput) => out.images.flatMap((i) => (i.type === 'url' ? [i.data] : []));

describe('@stable-canvas/comfyui-client on an open server', () => {
  let s: ClientServer;
  let client: Client;
  const signal = new WaitSignal();
  beforeAll(async () => {
    s = await startClientServer();
    client = new Client({ api_host: s.host, WebSocket });
    client.use(signal);
    expect(await within('connect', client.connect())).toBe(true);
  });
  afterAll(async () => {
    client?.close();
    await s?.close();
  });

  it('node definitions and the model lists they give (none here), system stats, embeddings, extensions; free succeeds', async () => {
    const defs = await client.getNodeDefs();
    expect(defs.LoadImage).toMatchObject({ name: 'LoadImage', output: ['IMAGE', 'MASK'] });
    expect(defs.SaveImage.output_node).toBe(true);
    for (const list of [
      client.getSamplers(),
      client.getSchedulers(),
      client.getSDModels(),
      client.getLoRAs(),
      client.getVAEs(),
      client.getUpscaleModels(),
    ]) {
      expect(await list).toEqual([]);
    }
    const stats = await client.getSystemStats();
    expect(stats.devices).toEqual([]);
    expect(typeof stats.system.os).toBe('string');
    expect(await client.getEmbeddings()).toEqual([]);
    expect(await client.getExtensions()).toEqual([]);
    await expect(client.free({ unload_models: true, free_memory: true })).resolves.toBeUndefined();
  });

  it('an upload (through fetchApi: the client has no upload call) names the file; enqueue loads it and resolves with a /view URL of the result', async () => {
    const form = new FormData();
    form.append('image', new Blob([makePng(5, 4, 3, () => [10, 200, 30])], { type: 'image/png' }), 'photo.png');
    const uploaded = (await (await client.fetchApi('/upload/image', { method: 'POST', body: form })).json()) as { name: string };
    expect(uploaded).toEqual({ name: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'input' });

    const out = await enqueueHeld(s, signal, 'sc-upload', () => client.enqueue(heldInvertWorkflow(['sc-upload'], uploaded.name, 10, 8)));
    const [url] = urlsOf(out);
    expect(url).toMatch(/\/view\?filename=[0-9a-f]{64}\.png&subfolder=&type=output$/);
    expectSolidPng(await bytesAt(fetch, url), 10, 8, [245, 55, 225]);

    const { History } = await client.getHistory(10);
    const item = History.find((h) => h.prompt[1] === out.prompt_id);
    expect(item?.status).toMatchObject({ status_str: 'success', completed: true });
    expect(await client.getPromptStatus(out.prompt_id)).toEqual({ running: false, pending: false, done: true });
  });

  it('enqueue reports each progress step of its prompt, and a preview arrives as image data and as a temp /view URL', async () => {
    const steps: Array<[number, number]> = [];
    const preview = new Promise<{ image: ArrayBuffer; mime: string }>((resolve) => client.once('image_data', resolve));
    const workflow = heldImageWorkflow(['sc-progress'], 4, 3, 0x2060a0, 'PreviewImage', 3);
    const out = await enqueueHeld(s, signal, 'sc-progress', () =>
      client.enqueue(workflow, { progress: (p: { value: number; max: number }) => steps.push([p.value, p.max]) }),
    );
    expect(steps).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    const { image, mime } = await within('the preview', preview);
    expect(mime).toBe('image/png');
    expectSolidPng(new Uint8Array(image), 4, 3, rgbOf(0x2060a0));
    const [url] = urlsOf(out);
    expect(url).toMatch(/&type=temp$/);
    expectSolidPng(await bytesAt(fetch, url), 4, 3, rgbOf(0x2060a0));
  });

  it('enqueue_polling follows the prompt through /queue and /history and resolves with its image URL', async () => {
    const workflow = {
      e: { class_type: 'EmptyImage', inputs: { width: 2, height: 5, batch_size: 1, color: 0x0a0b0c } },
      s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'polled' } },
    };
    const out = await within('enqueue_polling', client.enqueue_polling(workflow, { polling_ms: 20 }));
    expectSolidPng(await bytesAt(fetch, urlsOf(out)[0]), 2, 5, rgbOf(0x0a0b0c));
  });

  it('queue: the running and the pending prompt as the client parses them; deleteItem drops the pending one, interrupt ends the running one', async () => {
    const running = await queued(client, heldValueWorkflow(['sc-run'], 1));
    const pending = await queued(client, heldValueWorkflow(['sc-wait'], 2));
    await within('the first job to run', s.gates.reached('sc-run'));
    const queue = await client.getQueue();
    expect(queue.Running.map((item) => (item as unknown[])[1])).toEqual([running]);
    expect(queue.Pending.map((item) => (item as unknown[])[1])).toEqual([pending]);
    expect(await client.getPromptStatus(running)).toEqual({ running: true, pending: false, done: false });
    expect(await client.getPromptStatus(pending)).toEqual({ running: false, pending: true, done: false });

    await client.deleteItem('queue', pending);
    expect(await client.getPromptStatus(pending)).toMatchObject({ done: true });

    const interrupted = new Promise((resolve) => client.once('execution_interrupted', resolve));
    const over = new Promise((resolve) => client.on('executing', (d) => d.node === null && d.prompt_id === running && resolve(d)));
    await client.interrupt(running);
    expect(await within('execution_interrupted', interrupted)).toMatchObject({ prompt_id: running, node_id: 'h1', node_type: 'Hold' });
    await within('the end of the run', over);
    expect(await client.getQueue()).toEqual({ Running: [], Pending: [] });
    const item = (await client.getHistory(10)).History.find((h) => h.prompt[1] === running);
    expect(item?.status).toMatchObject({ status_str: 'error', completed: false });
  });

  it('errors: a refused workflow rejects with HttpError 400 carrying the reference body; a failing node rejects with WorkflowExecutionError', async () => {
    const refused = await client.enqueue(UNKNOWN_NODE_WORKFLOW).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).status).toBe(400);
    expect((refused as HttpError).json).toMatchObject({ error: { type: 'missing_node_type' }, node_errors: {} });

    const failed = await enqueueHeld(s, signal, 'sc-fail', () => client.enqueue(heldFailingWorkflow(['sc-fail']))).catch((e: unknown) => e);
    expect(failed).toMatchObject({
      message: 'Execution error: cannot do that (TypeError)',
      payload: { node_id: 'f', node_type: 'Fail', exception_type: 'TypeError', exception_message: 'cannot do that' },
    });
  });
});

describe('@stable-canvas/comfyui-client with an API key', () => {
  const KEY = 'key-alice';
  let s: ClientServer;
  beforeAll(async () => {
    s = await startClientServer({ accounts: [{ id: 'alice', tier: 'pro', apiKeys: [KEY] }] });
  });
  afterAll(async () => s?.close());

  /** The client's fetch option: every HTTP request carries the key, as the cloud contract wants it. */
  const keyedFetch: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'X-API-Key': KEY } });

  it('the key as a header through its fetch option and as `token` on /ws (LoginAuthPlugin), under /api: a run and its image', async () => {
    const client = new Client({ api_host: s.host, api_base: '/api', WebSocket, fetch: keyedFetch });
    const signal = new WaitSignal();
    client.use(new plugins.LoginAuthPlugin({ token: KEY }));
    client.use(signal);
    try {
      await within('connect', client.connect());
      const out = await enqueueHeld(s, signal, 'sc-key', () => client.enqueue(heldImageWorkflow(['sc-key'], 3, 2, 0x445566)));
      const [url] = urlsOf(out);
      expectSolidPng(await bytesAt(keyedFetch, url), 3, 2, rgbOf(0x445566));
      // The URLs it builds carry no key.
      expect((await fetch(url)).status).toBe(401);
    } finally {
      client.close();
    }
  });

  it('LoginAuthPlugin alone: /ws takes its `token`, HTTP wants the key as a header and answers 401', async () => {
    const client = new Client({ api_host: s.host, WebSocket });
    client.use(new plugins.LoginAuthPlugin({ token: KEY }));
    try {
      expect(await within('connect', client.connect())).toBe(true);
      const refused = await client.getNodeDefs().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(HttpError);
      expect((refused as HttpError).status).toBe(401);
      expect((refused as HttpError).json).toMatchObject({ code: 'unauthorized' });
    } finally {
      client.close();
    }
  });

  it('a wrong key: the /ws upgrade is refused and the client reports a connection error', async () => {
    const client = new Client({ api_host: s.host, WebSocket });
    client.use(new plugins.LoginAuthPlugin({ token: 'key-nobody' }));
    try {
      const error = new Promise<{ message: string }>((resolve) => client.once('connection_error', resolve));
      client.connect().catch(() => undefined);
      expect((await within('connection_error', error)).message).toContain('401');
    } finally {
      client.close();
    }
  });
});
