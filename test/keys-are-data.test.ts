// Node ids, class names, input names and file names come from clients: they
// are data, never looked up on or written into a plain object whose
// prototype answers for them. A workflow whose node ids are `__proto__`,
// `constructor`, `toString`, ... runs like any other on both surfaces, shows
// those ids in its workflow, outputs and history; a class or file of such a
// name is a plain "no such class" / "no such file".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { getWorkflow, TERMINAL, until, waitForJob } from './helpers/jobs.ts';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '__defineGetter__'];

/** JSON text, since an object literal cannot hold an own `__proto__` key. */
const workflowText = (id: string) =>
  `{"${id}":{"class_type":"PrimitiveString","inputs":{"value":"from ${id}"}},` +
  `"${id}_out":{"class_type":"graphrun.SaveText","inputs":{"text":["${id}",0],"filename_prefix":"k"}},` +
  `"out_${id}":{"class_type":"PreviewAny","inputs":{"source":["${id}",0],"${id}":"an input of that name"}}}`;

const post = (h: Harness, path: string, body: string) => h.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe.each(MODES)('keys are data (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(() => h.close());

  it.each(NAMES)('POST /api/v2/jobs: node id %s runs, and its workflow and outputs keep the id', async (id) => {
    const res = await post(h, '/api/v2/jobs', `{"workflow":${workflowText(id)}}`);
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(201);
    const done = await waitForJob(h, body.id, TERMINAL, 20_000);
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.outputs.map((o: any) => o.node_id)).toContain(`${id}_out`);
    const workflow = await getWorkflow(h, body.id);
    expect(Object.keys(workflow.body.workflow).sort()).toEqual([id, `${id}_out`, `out_${id}`].sort());
    expect(Object.hasOwn(workflow.body.workflow[`out_${id}`].inputs, id)).toBe(true);
  });

  it.each(NAMES)('POST /api/prompt: node id %s runs, and history keeps the id', async (id) => {
    const res = await post(h, '/api/prompt', `{"prompt":${workflowText(id)}}`);
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    let entry: any;
    await until(
      'history entry',
      async () => {
        const history = (await (await h.fetch(`/api/history/${body.prompt_id}`)).json()) as any;
        entry = history[body.prompt_id];
        return entry?.status?.completed === true;
      },
      20_000,
    );
    expect(entry.status.status_str).toBe('success');
    expect(Object.hasOwn(entry.outputs, `${id}_out`)).toBe(true);
    expect(Object.hasOwn(entry.prompt[2], id)).toBe(true);
  });

  it.each(NAMES)('a class named %s is an unknown class on both surfaces', async (name) => {
    const workflow = `{"a":{"class_type":"${name}","inputs":{}}}`;
    const v2 = await post(h, '/api/v2/jobs', `{"workflow":${workflow}}`);
    expect(v2.status).toBe(422);
    expect(((await v2.json()) as any).error.code).toBe('invalid_workflow');
    const cloud = await post(h, '/api/prompt', `{"prompt":${workflow}}`);
    expect(cloud.status).toBe(400);
    expect(((await cloud.json()) as any).error.type).toBe('missing_node_type');
    const info = await h.fetch(`/api/object_info/${encodeURIComponent(name)}`);
    expect(info.status).toBeLessThan(500);
    await info.body?.cancel();
  });

  it.each(NAMES)('a file named %s is a plain 404 on /api/view', async (name) => {
    const res = await h.fetch(`/api/view?filename=${encodeURIComponent(name)}&type=output`);
    expect(res.status).toBe(404);
    await res.body?.cancel();
  });
});
