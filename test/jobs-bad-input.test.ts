// Every way POST /api/v2/jobs refuses a submission: the body (media type,
// JSON, size, shape, reserved and closed fields), the UI export, each kind of
// invalid workflow with its node_errors entry, and asset references. A refused
// submission stores and queues nothing.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { expectEnvelope } from './helpers/assets.ts';
import { MODES } from './helpers/harness.ts';
import { assetRef, cancelJob, expectJobShape, getJob, type JobsHarness, startJobs, submit, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';

const post = (h: JobsHarness, body: NonNullable<RequestInit['body']>, contentType: string | null, headers: Record<string, string> = {}) =>
  h.fetch('/api/v2/jobs', { method: 'POST', body, headers: contentType === null ? headers : { 'content-type': contentType, ...headers } });

const postJson = (h: JobsHarness, body: unknown) => post(h, JSON.stringify(body), 'application/json');

/** Posts `{ workflow }` and expects 422 invalid_workflow; returns details.node_errors. */
async function nodeErrorsOf(
  h: JobsHarness,
  workflow: unknown,
): Promise<Record<string, Array<{ field: string | null; reason: string; message: string }>>> {
  const body = await expectEnvelope(await postJson(h, { workflow }), 422, 'invalid_workflow');
  const errors = body.error.details?.node_errors;
  expect(errors, JSON.stringify(body)).toBeTypeOf('object');
  for (const entries of Object.values(errors as Record<string, unknown[]>)) {
    expect(Array.isArray(entries)).toBe(true);
    for (const e of entries as any[]) {
      expect(Object.keys(e).sort()).toEqual(['field', 'message', 'reason']);
      expect(e.field === null || typeof e.field === 'string').toBe(true);
      expect(typeof e.reason).toBe('string');
      expect(typeof e.message).toBe('string');
      expect(e.message.length).toBeGreaterThan(0);
    }
  }
  return errors;
}

/** A UI export as the editor saves it. */
const uiExport = {
  last_node_id: 2,
  last_link_id: 1,
  nodes: [
    {
      id: 1,
      type: 'EmptyImage',
      pos: [0, 0],
      size: [300, 100],
      inputs: [],
      outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1] }],
      widgets_values: [512, 512, 1, 0],
    },
    { id: 2, type: 'SaveImage', pos: [400, 0], size: [300, 100], inputs: [{ name: 'images', type: 'IMAGE', link: 1 }], widgets_values: ['ComfyUI'] },
  ],
  links: [[1, 1, 0, 2, 0, 'IMAGE']],
  groups: [],
  config: {},
  extra: {},
  version: 0.4,
};

describe.each(MODES)('POST /api/v2/jobs refusals (%s)', (mode) => {
  let h: JobsHarness;
  const start = (options: Partial<ServiceOptions> = {}) => startJobs(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  describe('the request body', () => {
    it('415 unsupported_media_type for a body that is not JSON', async () => {
      await start();
      const body = JSON.stringify({ workflow: sumWorkflow('n') });
      await expectEnvelope(await post(h, body, 'text/plain'), 415, 'unsupported_media_type');
      await expectEnvelope(await post(h, body, 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
      const form = new FormData();
      form.append('workflow', JSON.stringify(sumWorkflow('n')));
      await expectEnvelope(await h.fetch('/api/v2/jobs', { method: 'POST', body: form }), 415, 'unsupported_media_type');
      // A JSON media type with parameters is fine.
      expect((await post(h, body, 'application/json; charset=utf-8')).status).toBe(201);
    });

    it('400 malformed_request for malformed JSON', async () => {
      await start();
      for (const text of ['{"workflow": ', '{workflow: {}}', '', 'nope', '{"workflow": {}}}']) {
        await expectEnvelope(await post(h, text, 'application/json'), 400, 'malformed_request');
      }
    });

    it('413 payload_too_large above maxWorkflowBytes; a body under it is accepted', async () => {
      await start({ maxWorkflowBytes: 1024 });
      const big = { workflow: { ...sumWorkflow('n'), pad: { class_type: 'Number', inputs: { value: 1 }, _meta: { title: 'x'.repeat(2000) } } } };
      await expectEnvelope(await postJson(h, big), 413, 'payload_too_large');
      expect((await postJson(h, { workflow: sumWorkflow('n') })).status).toBe(201);
    });

    // The contract's 422 codes for this operation are invalid_workflow, workflow_format_ui,
    // missing_asset and idempotency_key_reuse: a body that carries no workflow is the first.
    it('422 invalid_workflow for a body that is not an object', async () => {
      await start();
      for (const body of [[], [{ workflow: sumWorkflow('n') }], 'workflow', 42, null, true]) {
        const res = await expectEnvelope(await postJson(h, body), 422, 'invalid_workflow');
        expect(res.error.details).toEqual({ field: '(body)', reason: 'must be an object' });
        expect(res.error.message).toMatch(/workflow/);
      }
    });

    it('422 invalid_workflow (details.field workflow) when workflow is missing or not an object', async () => {
      await start();
      // An array of nodes is not the API format either, even one whose indices work as node ids.
      const arrayOfNodes = [
        { class_type: 'Number', inputs: { value: 1 } },
        { class_type: 'Show', inputs: { value: ['0', 0] } },
      ];
      for (const body of [
        {},
        { prompt: sumWorkflow('n') },
        { workflow: null },
        { workflow: 'x' },
        { workflow: 3 },
        { workflow: [] },
        { workflow: arrayOfNodes },
      ]) {
        const res = await expectEnvelope(await postJson(h, body), 422, 'invalid_workflow');
        expect(res.error.details?.field, JSON.stringify(body)).toBe('workflow');
        expect(res.error.message).toMatch(/^workflow: /);
      }
    });

    it('422 invalid_workflow for the reserved webhook_url and inputs, naming the field', async () => {
      await start();
      for (const [field, value] of [
        ['webhook_url', 'https://example.com/hook'],
        ['inputs', { seed: 1 }],
        ['webhook_url', null],
      ] as const) {
        const res = await expectEnvelope(await postJson(h, { workflow: sumWorkflow('n'), [field]: value }), 422, 'invalid_workflow');
        expect(res.error.details).toEqual({ field, reason: 'reserved' });
        expect(res.error.message).toContain(field);
      }
    });

    it('extra_data is a closed object of strings: other keys and other values are 422 invalid_request', async () => {
      await start();
      const bad = [{ unknown_key: 'x' }, { api_key_comfy_org: 'k', extra_pnginfo: {} }, { api_key_comfy_org: 42 }, { api_key_platform_org: null }];
      for (const extra_data of bad) {
        const res = await expectEnvelope(await postJson(h, { workflow: sumWorkflow('n'), extra_data }), 422, 'invalid_request');
        expect(String(res.error.details?.field), JSON.stringify(extra_data)).toMatch(/^extra_data/);
      }
      for (const extra_data of ['k', ['k'], 3]) {
        await expectEnvelope(await postJson(h, { workflow: sumWorkflow('n'), extra_data }), 422, 'invalid_request');
      }
      // The enumerated keys are accepted (each alone, or both with the same key).
      for (const extra_data of [{ api_key_comfy_org: 'a' }, { api_key_platform_org: 'b' }, { api_key_comfy_org: 'c', api_key_platform_org: 'c' }]) {
        const ok = await submit(h, { workflow: sumWorkflow('n'), extra_data });
        expect({ status: ok.res.status, body: ok.body }).toMatchObject({ status: 201 });
      }
      expect((await submit(h, { workflow: sumWorkflow('n'), extra_data: {} })).res.status).toBe(201);
    });

    it('422 workflow_format_ui for the editor export (nodes + links)', async () => {
      await start();
      await expectEnvelope(await postJson(h, { workflow: uiExport }), 422, 'workflow_format_ui');
    });
  });

  describe('invalid_workflow node_errors', () => {
    it('unknown class_type: missing_node_type on that node', async () => {
      await start();
      const errors = await nodeErrorsOf(h, { ...sumWorkflow('n'), x: { class_type: 'NoSuchNode', inputs: {} } });
      expect(errors.x?.[0]?.reason).toBe('missing_node_type');
    });

    it('a node that is not an object, or has no class_type or no inputs object: invalid_prompt on that node', async () => {
      await start();
      for (const node of [
        'Number',
        42,
        null,
        ['Number'],
        { inputs: { value: 1 } },
        { class_type: 7, inputs: {} },
        { class_type: 'Number' },
        { class_type: 'Number', inputs: [] },
      ]) {
        const errors = await nodeErrorsOf(h, { ...sumWorkflow('n'), bad: node });
        expect(errors.bad?.[0]?.reason, JSON.stringify(node)).toBe('invalid_prompt');
      }
    });

    it('missing required input: required_input_missing naming the input', async () => {
      await start();
      const wf = sumWorkflow('n');
      wf.n3.inputs = { a: ['n1', 0] };
      const errors = await nodeErrorsOf(h, wf);
      expect(errors.n3).toEqual([expect.objectContaining({ field: 'b', reason: 'required_input_missing' })]);
    });

    it('wrong type: invalid_input_type naming the input', async () => {
      await start();
      const wf = sumWorkflow('n');
      wf.n1.inputs.value = 'three';
      const errors = await nodeErrorsOf(h, wf);
      expect(errors.n1).toEqual([expect.objectContaining({ field: 'value', reason: 'invalid_input_type' })]);
      const wf2 = sumWorkflow('n');
      wf2.n2.inputs.value = 1.5;
      expect((await nodeErrorsOf(h, wf2)).n2).toEqual([expect.objectContaining({ field: 'value', reason: 'invalid_input_type' })]);
    });

    it('below min / above max: value_smaller_than_min / value_bigger_than_max', async () => {
      await start();
      const low = sumWorkflow('n');
      low.n1.inputs.value = -1;
      expect((await nodeErrorsOf(h, low)).n1).toEqual([expect.objectContaining({ field: 'value', reason: 'value_smaller_than_min' })]);
      const high = sumWorkflow('n');
      high.n2.inputs.value = 101;
      expect((await nodeErrorsOf(h, high)).n2).toEqual([expect.objectContaining({ field: 'value', reason: 'value_bigger_than_max' })]);
      // The bounds themselves are fine.
      const edges = sumWorkflow('n', 0, 100);
      expect((await postJson(h, { workflow: edges })).status).toBe(201);
    });

    it('a combo value not in its list: value_not_in_list', async () => {
      await start();
      const wf = {
        t: { class_type: 'Text', inputs: { text: 'abc', flag: true, mode: 'medium' } },
        s: { class_type: 'Show', inputs: { value: ['t', 1] } },
      };
      expect((await nodeErrorsOf(h, wf)).t).toEqual([expect.objectContaining({ field: 'mode', reason: 'value_not_in_list' })]);
      wf.t.inputs.mode = 'slow';
      expect((await postJson(h, { workflow: wf })).status).toBe(201);
    });

    it('a link to a missing node: bad_linked_input', async () => {
      await start();
      const wf = sumWorkflow('n');
      wf.n3.inputs.b = ['n99', 0];
      expect((await nodeErrorsOf(h, wf)).n3).toEqual([expect.objectContaining({ field: 'b', reason: 'bad_linked_input' })]);
    });

    it('a link to an out-of-range output index: bad_linked_input', async () => {
      await start();
      const wf = sumWorkflow('n');
      wf.n3.inputs.a = ['n1', 1];
      expect((await nodeErrorsOf(h, wf)).n3).toEqual([expect.objectContaining({ field: 'a', reason: 'bad_linked_input' })]);
    });

    it('a link of the wrong type: return_type_mismatch', async () => {
      await start();
      const wf = {
        t: { class_type: 'Text', inputs: { text: 'abc', flag: true, mode: 'fast' } },
        s: { class_type: 'Show', inputs: { value: ['t', 0] } }, // STRING into INT
      };
      expect((await nodeErrorsOf(h, wf)).s).toEqual([expect.objectContaining({ field: 'value', reason: 'return_type_mismatch' })]);
      // Output 1 of Text is the INT length: accepted.
      expect((await postJson(h, { workflow: { ...wf, s: { class_type: 'Show', inputs: { value: ['t', 1] } } } })).status).toBe(201);
    });

    it('a cycle: dependency_cycle on the nodes in it', async () => {
      await start();
      const wf = {
        a: { class_type: 'Add', inputs: { a: ['b', 0], b: ['n', 0] } },
        b: { class_type: 'Add', inputs: { a: ['a', 0], b: ['n', 0] } },
        n: { class_type: 'Number', inputs: { value: 1 } },
        s: { class_type: 'Show', inputs: { value: ['a', 0] } },
      };
      const errors = await nodeErrorsOf(h, wf);
      expect(errors.a).toEqual([expect.objectContaining({ reason: 'dependency_cycle' })]);
      expect(errors.b).toEqual([expect.objectContaining({ reason: 'dependency_cycle' })]);
      expect(errors.n).toBeUndefined();
      expect(errors.s).toBeUndefined();
    });

    it('no output node (and an empty workflow): invalid_workflow', async () => {
      await start();
      const { n1, n2, n3 } = sumWorkflow('n');
      await expectEnvelope(await postJson(h, { workflow: { n1, n2, n3 } }), 422, 'invalid_workflow');
      await expectEnvelope(await postJson(h, { workflow: {} }), 422, 'invalid_workflow');
    });

    it('one bad output fails the whole submission: nothing partial runs', async () => {
      await start();
      const wf = { ...sumWorkflow('n'), bad: { class_type: 'Show', inputs: { value: ['n99', 0] } } };
      const errors = await nodeErrorsOf(h, wf);
      expect(errors.bad).toEqual([expect.objectContaining({ field: 'value', reason: 'bad_linked_input' })]);
      await new Promise((r) => setTimeout(r, 50));
      expect(h.runs.Add).toBeUndefined();
    });
  });

  describe('asset references', () => {
    it('an absent, malformed or ill-formed core/ASSET reference is 422 missing_asset', async () => {
      await start();
      const withImage = (image: unknown) => ({
        workflow: {
          l: { class_type: 'LoadImage', inputs: { image } },
          s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'x' } },
        },
      });
      for (const image of [
        assetRef(crypto.randomUUID()),
        assetRef('not-a-uuid'),
        { __type: 'core/ASSET', info: {} },
        { __type: 'core/ASSET' },
        { __type: 'core/ASSET', info: { id: 42 } },
      ]) {
        await expectEnvelope(await postJson(h, withImage(image)), 422, 'missing_asset');
      }
    });
  });

  it('a refused submission stores and queues nothing', async () => {
    await start({ maxQueueDepth: 1, maxWorkflowBytes: 4096 });
    // Tier free: one job runs, the next waits in the queue (depth 1 = full).
    const running = await submitOk(h, waitWorkflow(1, 50, 40));
    await waitForJob(h, running.id, 'running');
    // Inside its Wait node, so the cancel below stops it there (a cancel between nodes would skip Wait).
    await until('the running job is in its Wait node', () => h.runs.Wait === 1, 20_000);

    const refusals: Array<[NonNullable<RequestInit['body']>, string | null]> = [
      [JSON.stringify({ workflow: sumWorkflow('n') }), 'text/plain'],
      ['{"workflow":', 'application/json'],
      [JSON.stringify({ workflow: sumWorkflow('n'), pad: 'x'.repeat(5000) }), 'application/json'],
      [JSON.stringify([]), 'application/json'],
      [JSON.stringify({}), 'application/json'],
      [JSON.stringify({ workflow: sumWorkflow('n'), webhook_url: 'https://e.x' }), 'application/json'],
      [JSON.stringify({ workflow: sumWorkflow('n'), extra_data: { nope: 'x' } }), 'application/json'],
      [JSON.stringify({ workflow: uiExport }), 'application/json'],
      [JSON.stringify({ workflow: { x: { class_type: 'Nope', inputs: {} } } }), 'application/json'],
      [JSON.stringify({ workflow: { l: { class_type: 'LoadImage', inputs: { image: assetRef(crypto.randomUUID()) } } } }), 'application/json'],
    ];
    for (const [body, type] of refusals) {
      const res = await post(h, body, type);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      await res.body?.cancel();
    }
    // Had any been queued, this one would find the queue full, or something ahead of it.
    const next = await submit(h, { workflow: waitWorkflow(2, 10, 1) });
    expect(next.res.status).toBe(201);
    expectJobShape(next.body);
    expect(next.body.status).toBe('queued');
    expect(next.body.queue_position).toBe(0);
    // And no id a refusal might have minted answers.
    expect((await getJob(h, crypto.randomUUID())).res.status).toBe(404);

    await cancelJob(h, running.id);
    await waitForJob(h, next.body.id, 'succeeded');
    expect(h.runs.Wait).toBe(2);
  });
});
