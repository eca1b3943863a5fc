// comfy-ui-client (ComfyUIClient) driven against a real graphrun server as
// its users drive a ComfyUI server: connect over /ws, object info, an upload
// used by LoadImage, getImages (queue, wait for the end, read history, fetch
// each image), getImage, history and queue, interrupt, history edits, a
// refused workflow and a node failing. The client has no way to send an API
// key, so it runs against an open server only.
import { ComfyUIClient } from 'comfy-ui-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePng } from './helpers/cloud-files.ts';
import {
  type ClientServer,
  expectSolidPng,
  heldFailingWorkflow,
  heldInvertWorkflow,
  heldValueWorkflow,
  startClientServer,
  UNKNOWN_NODE_WORKFLOW,
  within,
} from './helpers/comfy-clients.ts';

/** A ComfyUIClient that says when getImages starts listening on its socket (only after POST /prompt answered). */
class WatchedClient extends ComfyUIClient {
  listening(): Promise<void> {
    const ws = this.ws;
    if (!ws) throw new Error('not connected');
    return new Promise((resolve) => {
      const added = (event: string | symbol) => {
        if (event !== 'message') return;
        ws.off('newListener', added);
        // `newListener` fires just before the listener is added.
        queueMicrotask(resolve);
      };
      ws.on('newListener', added);
    });
  }
}

type Images = Awaited<ReturnType<ComfyUIClient['getImages']>>;

describe('comfy-ui-client on an open server', () => {
  let s: ClientServer;
  let client: WatchedClient;
  beforeAll(async () => {
    s = await startClientServer();
    client = new WatchedClient(s.host, 'comfy-ui-client-test');
    await within('connect', client.connect());
  });
  afterAll(async () => {
    await client?.disconnect();
    await s?.close();
  });

  /**
   * getImages of a job held at gate `key`, let go once the client listens and
   * the job holds; `atGate` runs then (with the prompt id, from the queue)
   * and opens the gate unless it returns false.
   */
  async function getImagesHeld(key: string, workflow: Record<string, unknown>, atGate?: (id: string) => Promise<boolean>) {
    const listening = client.listening();
    const images = client.getImages(workflow as Parameters<ComfyUIClient['getImages']>[0]);
    await within('the client to listen', Promise.race([Promise.all([listening, s.gates.reached(key)]), images]));
    const [running] = (await client.getQueue()).queue_running as Array<[number, string]>;
    const id = running[1];
    if (!atGate || (await atGate(id))) s.gates.open(key);
    return { images: (await within('getImages', images)) as Images, id };
  }

  it('object info of all nodes and of one, embeddings, extensions, system stats, the queue counter', async () => {
    expect(Object.keys(await client.getObjectInfo())).toEqual(expect.arrayContaining(['LoadImage', 'ImageInvert', 'SaveImage']));
    const one = await client.getObjectInfo('ImageInvert');
    expect(Object.keys(one)).toEqual(['ImageInvert']);
    expect(one.ImageInvert).toMatchObject({ input: { required: { image: ['IMAGE'] } }, output: ['IMAGE'], output_node: false, name: 'ImageInvert' });
    expect(await client.getObjectInfo('NoSuchNode')).toEqual({});
    expect(await client.getEmbeddings()).toEqual([]);
    expect(await client.getExtensions()).toEqual([]);
    expect((await client.getSystemStats()).devices).toEqual([]);
    expect(await client.getPrompt()).toEqual({ exec_info: { queue_remaining: 0 } });
  });

  it('uploadImage names the file; getImages runs LoadImage with it and returns the saved PNG; getImage fetches it again; history has it', async () => {
    const uploaded = await client.uploadImage(Buffer.from(makePng(5, 4, 3, () => [10, 200, 30])), 'photo.png');
    expect(uploaded).toEqual({ name: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'input' });

    const { images, id } = await getImagesHeld('cc-upload', heldInvertWorkflow(['cc-upload'], uploaded.name, 10, 8));
    expect(Object.keys(images)).toEqual(['s']);
    const [{ blob, image }] = images.s;
    expect(image).toEqual({ filename: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'output' });
    const bytes = new Uint8Array(await blob.arrayBuffer());
    expectSolidPng(bytes, 10, 8, [245, 55, 225]);
    const again = await client.getImage(image.filename, image.subfolder, image.type);
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(bytes);

    const history = await client.getHistory(id);
    expect(Object.keys(history)).toEqual([id]);
    expect(history[id].outputs).toEqual({ s: { images: [image] } });
    expect(history[id].prompt[1]).toBe(id);
    expect(Object.keys(await client.getHistory())).toContain(id);
  });

  it('interrupt while getImages waits: the queue listed the prompt as running; getImages resolves with no images; history says interrupted', async () => {
    let queue: unknown;
    const { images, id } = await getImagesHeld('cc-interrupt', heldValueWorkflow(['cc-interrupt'], 3), async () => {
      queue = await client.getQueue();
      await client.interrupt();
      return false;
    });
    expect(queue).toEqual({
      queue_running: [[expect.any(Number), expect.any(String), expect.any(Object), ['s'], expect.any(Object)]],
      queue_pending: [],
    });
    expect(images).toEqual({});
    const entry = (await client.getHistory(id))[id] as { status?: { status_str: string; messages: Array<[string, unknown]> } };
    expect(entry.status?.status_str).toBe('error');
    expect(entry.status?.messages.map(([type]) => type)).toContain('execution_interrupted');
    expect(await client.getQueue()).toEqual({ queue_running: [], queue_pending: [] });
  });

  it('editHistory takes a prompt out of history, though the client then fails to parse the empty 200 (as on the reference)', async () => {
    const { id } = await getImagesHeld('cc-edit', heldValueWorkflow(['cc-edit'], 4));
    expect(Object.keys(await client.getHistory(id))).toEqual([id]);
    await expect(client.editHistory({ delete: [id] })).rejects.toThrow(SyntaxError);
    expect(await client.getHistory(id)).toEqual({});
  });

  it('a refused workflow: queuePrompt and getImages reject with the reference error body as the message', async () => {
    const refused = await client.queuePrompt(UNKNOWN_NODE_WORKFLOW).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Error);
    expect(JSON.parse((refused as Error).message)).toMatchObject({ error: { type: 'missing_node_type' }, node_errors: {} });
    await expect(client.getImages(UNKNOWN_NODE_WORKFLOW)).rejects.toThrow(/missing_node_type/);
  });

  it('a node failing as it runs: getImages resolves with no images, history carries the execution_error', async () => {
    const { images, id } = await getImagesHeld('cc-fail', heldFailingWorkflow(['cc-fail']));
    expect(images).toEqual({});
    const entry = (await client.getHistory(id))[id] as { status?: { status_str: string; messages: Array<[string, unknown]> } };
    expect(entry.status?.status_str).toBe('error');
    expect(entry.status?.messages.at(-1)).toEqual([
      'execution_error',
      expect.objectContaining({ node_id: 'f', node_type: 'Fail', exception_type: 'TypeError', exception_message: 'cannot do that' }),
    ]);
  });
});
