// GET /api/object_info and /api/object_info/{class} (and bare): the engine's
// definitions in the reference's format with every field present, partner
// nodes flagged, unknown classes 404, auth required; and the normalisation of
// a sparse definition (an engine that leaves fields out).
import { afterEach, describe, expect, it } from 'vitest';
import { nodeInfo } from '../core/cloud/object-info.ts';
import { defineNode } from '../engine/local/define-node.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { expectCloudError, type FilesHarness, reply, startFiles } from './helpers/cloud-files.ts';
import { MODES } from './helpers/harness.ts';

const INFO_FIELDS = [
  'api_node',
  'category',
  'deprecated',
  'description',
  'display_name',
  'experimental',
  'input',
  'input_order',
  'name',
  'output',
  'output_is_list',
  'output_name',
  'output_node',
  'python_module',
];

const partner = defineNode({
  name: 'PartnerGen',
  display_name: 'Partner Generate',
  category: 'api node/image',
  api_node: true,
  output_node: true,
  required: { prompt: ['STRING', { multiline: true }] },
  optional: { seed: ['INT', { default: 0, min: 0, max: 100 }] },
  outputs: [{ type: 'IMAGE', name: 'image' }],
  run: () => ({ outputs: [null] }),
});

function expectInfo(info: any, name: string): void {
  expect(Object.keys(info).sort()).toEqual(expect.arrayContaining(INFO_FIELDS));
  expect(info.name).toBe(name);
  for (const key of ['display_name', 'description', 'category', 'python_module']) expect(typeof info[key], key).toBe('string');
  for (const key of ['output_node', 'api_node', 'deprecated', 'experimental']) expect(typeof info[key], key).toBe('boolean');
  expect(typeof info.input.required).toBe('object');
  expect(info.input_order.required).toEqual(Object.keys(info.input.required));
  if (info.input.optional) expect(info.input_order.optional).toEqual(Object.keys(info.input.optional));
  for (const spec of Object.values<any>({ ...info.input.required, ...info.input.optional })) {
    expect(Array.isArray(spec)).toBe(true);
    expect(typeof spec[0] === 'string' || Array.isArray(spec[0])).toBe(true);
  }
  expect(info.output_name).toHaveLength(info.output.length);
  expect(info.output_is_list).toHaveLength(info.output.length);
}

describe.each(MODES)('cloud /object_info (%s)', (mode) => {
  let f: FilesHarness;
  afterEach(async () => f?.h.close());
  const start = async () => {
    const engine = createLocalEngine({ nodes: [...builtinNodes, partner] });
    f = await startFiles(mode, { engine });
    return engine;
  };

  it('every node definition of the engine, in the reference format, under /api and bare', async () => {
    const engine = await start();
    const defs = await engine.nodeDefinitions();
    for (const path of ['/api/object_info', '/object_info']) {
      const { res, body } = await reply(await f.alice.fetch(path));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(body).sort()).toEqual(Object.keys(defs).sort());
      for (const [name, info] of Object.entries<any>(body)) expectInfo(info, name);
    }
    const { body } = await reply(await f.alice.fetch('/api/object_info'));
    expect(body.LoadImage).toMatchObject({
      input: { required: { image: ['STRING', { image_upload: true }] } },
      output: ['IMAGE', 'MASK'],
      output_node: false,
      api_node: false,
      category: 'image',
    });
    expect(body.SaveImage.output_node).toBe(true);
    expect(body.SaveImage.input.required.filename_prefix).toEqual(['STRING', expect.objectContaining({ default: 'ComfyUI' })]);
  });

  it('/object_info/{class}: that class alone; a partner node is flagged api_node', async () => {
    await start();
    for (const path of ['/api/object_info/PartnerGen', '/object_info/PartnerGen']) {
      const { res, body } = await reply(await f.alice.fetch(path));
      expect(res.status).toBe(200);
      expect(Object.keys(body)).toEqual(['PartnerGen']);
      expectInfo(body.PartnerGen, 'PartnerGen');
      expect(body.PartnerGen).toMatchObject({
        api_node: true,
        output_node: true,
        display_name: 'Partner Generate',
        category: 'api node/image',
        input: { required: { prompt: ['STRING', { multiline: true }] }, optional: { seed: ['INT', { default: 0, min: 0, max: 100 }] } },
        input_order: { required: ['prompt'], optional: ['seed'] },
        output: ['IMAGE'],
        output_name: ['image'],
        output_is_list: [false],
      });
    }
  });

  it('an unknown class is 200 {} under /api and bare, as the reference answers it; a key is required (401)', async () => {
    await start();
    for (const name of ['NoSuchNode', 'constructor', '__proto__', '%E2%9C%93']) {
      for (const path of [`/api/object_info/${name}`, `/object_info/${name}`]) {
        const res = await f.alice.fetch(path);
        expect({ path, status: res.status, type: res.headers.get('content-type'), body: await res.text() }).toEqual({
          path,
          status: 200,
          type: 'application/json',
          body: '{}',
        });
      }
    }
    expectCloudError(await reply(await f.h.fetch('/api/object_info')), 401, 'unauthorized');
    expectCloudError(await reply(await f.h.fetch('/object_info/SaveImage', { headers: { 'x-api-key': 'wrong' } })), 401, 'unauthorized');
  });
});

describe('nodeInfo', () => {
  it('fills every reference field an engine left out, keeping extra ones', () => {
    const info = nodeInfo('Sparse', {
      input: { required: { a: ['INT'] }, hidden: { unique_id: ['UNIQUE_ID'] } },
      output: ['INT', 'STRING'],
      output_tooltips: ['first', 'second'],
    } as never);
    expect(info).toEqual({
      input: { required: { a: ['INT'] }, hidden: { unique_id: ['UNIQUE_ID'] } },
      input_order: { required: ['a'], hidden: ['unique_id'] },
      output: ['INT', 'STRING'],
      output_is_list: [false, false],
      output_name: ['INT', 'STRING'],
      output_tooltips: ['first', 'second'],
      name: 'Sparse',
      display_name: 'Sparse',
      description: '',
      python_module: 'nodes',
      category: '',
      output_node: false,
      deprecated: false,
      experimental: false,
      api_node: false,
    });
    expect(nodeInfo('Empty', {}).input).toEqual({ required: {} });
  });
});
