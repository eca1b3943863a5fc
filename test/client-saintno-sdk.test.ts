// @saintno/comfyui-sdk (ComfyApi, PromptBuilder, CallWrapper) driven against
// a real graphrun server as its users drive a ComfyUI server: init and
// readiness, model and node lists, uploads used by LoadImage, a run with its
// callbacks and outputs, the output image through getImage and
// getPathImage, history and queue, interrupt, a refused workflow and a node
// failing, and API keys as a bearer token or an X-API-Key header.
import {
  type BearerTokenCredentials,
  CallWrapper,
  ComfyApi,
  type CustomCredentials,
  type ImageInfo,
  type NodeData,
  PromptBuilder,
} from '@saintno/comfyui-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

type Credentials = BearerTokenCredentials | CustomCredentials;

/** The workflow in the exported API format PromptBuilder takes: each node with its `_meta.title`. */
function exported(workflow: Record<string, unknown>): NodeData {
  const out: NodeData = {};
  for (const [id, node] of Object.entries(workflow)) out[id] = { ...(node as Omit<NodeData[string], '_meta'>), _meta: { title: id } };
  return out;
}

/** A ready client: init() pings, probes extensions and opens /ws; waitForReady() resolves once that is done. */
async function readyClient(base: string, credentials?: Credentials): Promise<ComfyApi> {
  const api = new ComfyApi(base, undefined, credentials ? { credentials } : undefined);
  return within('the client to be ready', api.init().waitForReady());
}

/** Resolves when the client subscribes to `type`: ComfyApi reports each subscription as a `log` event. */
function subscribed(api: ComfyApi, type: string): Promise<void> {
  return new Promise((resolve) => {
    const off = api.on('log', (ev) => {
      // The declared detail type ({msg, data}) is not what ComfyApi sends ({fnName, message, data}).
      const detail = ev.detail as unknown as { fnName?: string; data?: { type?: string } };
      if (detail.fnName === 'on' && detail.data?.type === type) {
        off();
        resolve();
      }
    });
  });
}

/**
 * Runs the wrapper through a job that holds at gates `<key>/1` and `<key>/2`:
 * the first opens once the wrapper has its prompt id (it then listens for
 * `executing`), the second once it has subscribed to the job's events, which
 * it does only after it saw the job executing and checked its history. `atGate`
 * runs then, in place of opening the second gate when it returns false.
 */
async function runHeld<T>(s: ClientServer, key: string, wrapper: CallWrapper<string, string, any>, atGate?: () => Promise<boolean>) {
  const listening = subscribed((wrapper as unknown as { client: ComfyApi }).client, 'execution_interrupted');
  let promptId = '';
  const pending = new Promise<void>((resolve) =>
    wrapper.onPending((id) => {
      promptId = id ?? '';
      resolve();
    }),
  );
  const run = wrapper.run() as Promise<T | false | undefined>;
  await within('the prompt to be queued', Promise.all([pending, s.gates.reached(`${key}/1`)]));
  s.gates.open(`${key}/1`);
  await within('the wrapper to listen', Promise.all([listening, s.gates.reached(`${key}/2`)]));
  if (!atGate || (await atGate())) s.gates.open(`${key}/2`);
  return { result: await within('the run to end', run), promptId };
}

const gates = (key: string) => [`${key}/1`, `${key}/2`];

describe('@saintno/comfyui-sdk on an open server', () => {
  let s: ClientServer;
  let api: ComfyApi;
  beforeAll(async () => {
    s = await startClientServer();
    api = await readyClient(s.base);
  });
  afterAll(async () => {
    api?.destroy();
    await s?.close();
  });

  it('lists: no checkpoints, LoRAs or samplers; node definitions, system stats, features; freeMemory succeeds', async () => {
    expect(await api.getCheckpoints()).toEqual([]);
    expect(await api.getLoras()).toEqual([]);
    expect(await api.getSamplerInfo()).toEqual({});
    const defs = await api.getNodeDefs('ImageScale');
    expect(defs?.ImageScale).toMatchObject({ name: 'ImageScale', output: ['IMAGE'], output_node: false });
    expect(defs?.ImageScale.input.required.upscale_method[0]).toContain('nearest-exact');
    expect(await api.getNodeDefs('NoSuchNode')).toBeNull();
    expect(Object.keys((await api.getNodeDefs()) ?? {})).toEqual(expect.arrayContaining(['LoadImage', 'SaveImage', 'PreviewImage']));
    const stats = await api.getSystemStats();
    expect(typeof stats.system.os).toBe('string');
    expect(stats.devices).toEqual([]);
    expect(await api.getFeatures()).toMatchObject({ supports_preview_metadata: true });
    expect(await api.getExtensions()).toEqual([]);
    expect(await api.getEmbeddings()).toEqual([]);
    expect(await api.freeMemory(true, true)).toBe(true);
  });

  it('uploadImage names the file; a run loading it by that name gives the SaveImage output; getImage and getPathImage serve the pixels', async () => {
    const png = makePng(5, 4, 3, () => [10, 200, 30]);
    const upload = await api.uploadImage(png, 'photo.png');
    if (!upload) throw new Error('uploadImage failed');
    expect(upload.info).toMatchObject({ filename: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'input' });
    expect(new Uint8Array(await (await fetch(upload.url)).arrayBuffer())).toEqual(png);

    const workflow = heldInvertWorkflow(gates('sn-upload'), 'to be set', 10, 8);
    const builder = new PromptBuilder(exported(workflow), ['image'], ['saved'])
      .setRawInputNode('image', 'l.inputs.image')
      .setRawOutputNode('saved', 's');
    let finished: unknown;
    const wrapper = new CallWrapper(api, builder.input('image', upload.info.filename)).onFinished((data) => {
      finished = data;
    });
    const { result, promptId } = await runHeld<{ saved: { images: ImageInfo[] } }>(s, 'sn-upload', wrapper);
    if (!result) throw new Error('the run failed');
    const images = result.saved.images;
    expect(images).toEqual([{ filename: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'output' }]);
    expect(finished).toEqual(result);

    // Inverted, and scaled from 5x4 to 10x8.
    const blob = await api.getImage(images[0]);
    expectSolidPng(new Uint8Array(await blob.arrayBuffer()), 10, 8, [245, 55, 225]);
    const viaPath = await fetch(api.getPathImage(images[0]));
    expect(new Uint8Array(await viaPath.arrayBuffer())).toEqual(new Uint8Array(await blob.arrayBuffer()));

    const entry = await api.getHistory(promptId);
    expect(entry?.status).toMatchObject({ status_str: 'success', completed: true });
    expect(entry?.outputs.s).toEqual({ images });
    expect(entry?.prompt[1]).toBe(promptId);
    expect(Object.keys(await api.getHistories(10))).toContain(promptId);
  });

  it('a run calls pending, start, progress, preview, output and finished, in order, with the preview PNG', async () => {
    const workflow = heldImageWorkflow(gates('sn-events'), 4, 3, 0x2060a0, 'PreviewImage', 3);
    const builder = new PromptBuilder(exported(workflow), [], ['preview']).setRawOutputNode('preview', 'o');
    const calls: string[] = [];
    const previews: Blob[] = [];
    const wrapper = new CallWrapper(api, builder)
      .onStart(() => calls.push('start'))
      .onProgress((p) => calls.push(`progress ${p.value}/${p.max}`))
      .onPreview((blob) => {
        calls.push('preview');
        previews.push(blob);
      })
      .onOutput((key) => calls.push(`output ${key}`))
      .onFinished(() => calls.push('finished'))
      .onFailed((err) => calls.push(`failed ${err.name}`));
    const { result } = await runHeld<{ preview: { images: ImageInfo[] } }>(s, 'sn-events', wrapper);
    expect(calls).toEqual(['start', 'progress 1/3', 'progress 2/3', 'progress 3/3', 'preview', 'output preview', 'finished']);
    expectSolidPng(new Uint8Array(await previews[0].arrayBuffer()), 4, 3, rgbOf(0x2060a0));
    if (!result) throw new Error('the run failed');
    // A preview keeps the engine's temp file name in `executed` (history names it by content); /view serves both.
    const [temp] = result.preview.images;
    expect(temp).toEqual({ filename: expect.any(String), subfolder: '', type: 'temp' });
    expectSolidPng(new Uint8Array(await (await api.getImage(temp)).arrayBuffer()), 4, 3, rgbOf(0x2060a0));
  });

  it('interrupt ends the running job: the queue listed it as running, the run gives false with ExecutionInterruptedError', async () => {
    const builder = new PromptBuilder(exported(heldValueWorkflow(gates('sn-interrupt'), 5)), [], ['shown']).setRawOutputNode('shown', 's');
    let failure: Error | undefined;
    const wrapper = new CallWrapper(api, builder).onFailed((err) => {
      failure = err;
    });
    let queued: unknown;
    const { result, promptId } = await runHeld(s, 'sn-interrupt', wrapper, async () => {
      queued = await api.getQueue();
      await api.interrupt();
      return false;
    });
    expect(queued).toEqual({ queue_running: [[expect.any(Number), promptId, expect.any(Object), ['s'], expect.any(Object)]], queue_pending: [] });
    expect(result).toBe(false);
    expect(failure?.name).toBe('ExecutionInterruptedError');
    expect(failure?.cause).toMatchObject({ prompt_id: promptId });
    const entry = await api.getHistory(promptId);
    expect(entry?.status).toMatchObject({ status_str: 'error', completed: false });
    expect(entry?.status.messages.at(-1)?.[0]).toBe('execution_interrupted');
    expect(await api.getQueue()).toEqual({ queue_running: [], queue_pending: [] });
  });

  it('a workflow the server refuses: run() gives false, onFailed carries the reference error body; queuePrompt rejects with the 400', async () => {
    const failures: Error[] = [];
    const builder = new PromptBuilder(exported(UNKNOWN_NODE_WORKFLOW), [], ['out']).setRawOutputNode('out', 'x');
    const result = await new CallWrapper(api, builder).onFailed((err) => failures.push(err)).run();
    expect(result).toBe(false);
    // The wrapper reports the refusal with its cause, then once more as a plain "Failed to queue prompt".
    expect(failures.map((e) => [e.name, e.message])).toEqual([
      ['EnqueueFailedError', 'Failed to queue prompt'],
      ['Error', 'Failed to queue prompt'],
    ]);
    expect(failures[0].cause).toMatchObject({ error: { type: 'missing_node_type', message: expect.any(String) }, node_errors: {} });
    const refused = await api.queuePrompt(null, UNKNOWN_NODE_WORKFLOW).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Response);
    expect((refused as Response).status).toBe(400);
  });

  it('a node failing as it runs: onFailed gets the execution_error (exception type and message), history says error', async () => {
    const builder = new PromptBuilder(exported(heldFailingWorkflow(gates('sn-fail'))), [], ['shown']).setRawOutputNode('shown', 's');
    let failure: Error | undefined;
    const wrapper = new CallWrapper(api, builder).onFailed((err) => {
      failure = err;
    });
    const { result, promptId } = await runHeld(s, 'sn-fail', wrapper);
    expect(result).toBe(false);
    expect(failure?.name).toBe('CustomEventError');
    expect(failure?.message).toBe('TypeError');
    expect(failure?.cause).toMatchObject({ prompt_id: promptId, node_id: 'f', node_type: 'Fail', exception_message: 'cannot do that' });
    expect((await api.getHistory(promptId))?.status).toMatchObject({ status_str: 'error', completed: false });
  });
});

describe('@saintno/comfyui-sdk with API keys', () => {
  let s: ClientServer;
  beforeAll(async () => {
    s = await startClientServer({ accounts: [{ id: 'alice', tier: 'pro', apiKeys: ['key-alice'] }] });
  });
  afterAll(async () => s?.close());

  it.each<[string, Credentials]>([
    ['a bearer token', { type: 'bearer_token', token: 'key-alice' }],
    ['an X-API-Key header', { type: 'custom', headers: { 'X-API-Key': 'key-alice' } }],
  ])('credentials as %s reach HTTP and the /ws upgrade: a run, its image, the history', async (how, credentials) => {
    const api = await readyClient(s.base, credentials);
    try {
      const key = `sn-auth-${how}`;
      const builder = new PromptBuilder(exported(heldImageWorkflow(gates(key), 3, 2, 0x445566)), [], ['saved']).setRawOutputNode('saved', 'o');
      const { result, promptId } = await runHeld<{ saved: { images: ImageInfo[] } }>(s, key, new CallWrapper(api, builder));
      if (!result) throw new Error('the run failed');
      const [image] = result.saved.images;
      expectSolidPng(new Uint8Array(await (await api.getImage(image)).arrayBuffer()), 3, 2, rgbOf(0x445566));
      expect((await api.getHistory(promptId))?.status.completed).toBe(true);
      // getPathImage's URL carries no key: meant for servers without one.
      expect((await fetch(api.getPathImage(image))).status).toBe(401);
    } finally {
      api.destroy();
    }
  });

  it('a wrong key: the client reports auth_error with the 401 response', async () => {
    const api = new ComfyApi(s.base, undefined, { credentials: { type: 'bearer_token', token: 'key-nobody' } });
    try {
      const event = await within('auth_error', new Promise<CustomEvent<Response>>((resolve) => api.on('auth_error', resolve)));
      expect(event.detail.status).toBe(401);
    } finally {
      api.destroy();
    }
  });
});
