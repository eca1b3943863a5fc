// POST /api/prompt (and bare /prompt): the same job as POST /api/v2/jobs,
// seen from both surfaces, and the reference's refusal shape for every bad
// workflow, prompt and field. Admission (partner nodes, prompt ids, keys,
// credits, the full queue, subscriptions) is in cloud-jobs-admission.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { UUID, upload } from './helpers/assets.ts';
import { ACCOUNTS, asCloud, type CloudJobsHarness, expectPromptError, getJson, postJson, promptOk, startCloudJobs } from './helpers/cloud-jobs.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, assetRef, submitOk, waitForJob } from './helpers/jobs.ts';
import { sumWorkflow } from './helpers/local-nodes.ts';

describe.each(MODES)('POST /api/prompt (%s)', (mode) => {
  let h: CloudJobsHarness;
  const start = (options: Partial<ServiceOptions> = {}) => startCloudJobs(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  it('accepts a workflow: 200 {prompt_id, number, node_errors}, the same job v2 shows, run to its end', async () => {
    await start();
    const { res, body } = await postJson(h, '/api/prompt', { prompt: sumWorkflow('n'), client_id: 'c1', number: 5, front: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(body).sort()).toEqual(['node_errors', 'number', 'prompt_id']);
    expect(body.prompt_id).toMatch(UUID);
    expect(Number.isInteger(body.number)).toBe(true);
    expect(body.node_errors).toEqual({});
    const job = await waitForJob(h, body.prompt_id, 'succeeded');
    expect(job.id).toBe(body.prompt_id);
    expect(h.runs.Add).toBe(1);
    const { body: wf } = await getJson(h, `/api/v2/jobs/${body.prompt_id}/workflow`);
    expect(wf.workflow).toEqual(sumWorkflow('n'));
    // The bare route is the same route.
    const bare = await postJson(h, '/prompt', { prompt: sumWorkflow('m') });
    expect(bare.res.status).toBe(200);
    expect(bare.body.number).toBeGreaterThan(body.number);
  });

  it('a v2 job is seen by the cloud routes, a cloud job by v2', async () => {
    await start();
    const v2 = await submitOk(h, sumWorkflow('v'));
    await waitForJob(h, v2.id, 'succeeded');
    expect((await getJson(h, `/api/job/${v2.id}/status`)).body.status).toBe('completed');
    expect(Object.keys((await getJson(h, `/api/history/${v2.id}`)).body)).toEqual([v2.id]);
    const cloud = await promptOk(h, sumWorkflow('c', 1, 2));
    const job = await waitForJob(h, cloud.prompt_id, 'succeeded');
    expect(job.urls.self).toBe(`/api/v2/jobs/${cloud.prompt_id}`);
    expect((await getJson(h, `/api/jobs/${cloud.prompt_id}`)).body.status).toBe('completed');
  });

  it('accepts JSON sent with another Content-Type, as urllib clients of the reference send it', async () => {
    await start();
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      const r = await postJson(h, '/api/prompt', { prompt: sumWorkflow('t') }, { 'content-type': type });
      expect(r.res.status).toBe(200);
    }
  });

  it('refuses a workflow the engine refuses: 400 with the engine verdict per node', async () => {
    await start();
    const tooBig = { a: { class_type: 'Number', inputs: { value: 500 } }, b: { class_type: 'Show', inputs: { value: ['a', 0] } } };
    const body = expectPromptError(await postJson(h, '/api/prompt', { prompt: tooBig }), 400, 'invalid_workflow', 'prompt_outputs_failed_validation');
    expect(body.node_errors).toEqual({
      a: {
        errors: [
          {
            type: 'value_bigger_than_max',
            message: 'Value 500 bigger than max of 100',
            details: 'value',
            extra_info: { input_name: 'value', input_config: ['INT', { default: 0, min: 0, max: 100 }], received_value: 500 },
          },
        ],
        dependent_outputs: ['b'],
        class_type: 'Number',
      },
    });
    const unknown = expectPromptError(
      await postJson(h, '/api/prompt', { prompt: { a: { class_type: 'Nope', inputs: {} } } }),
      400,
      'invalid_workflow',
      'missing_node_type',
    );
    expect(unknown.error.extra_info).toMatchObject({ node_id: 'a', class_type: 'Nope' });
    const noOutputs = { a: { class_type: 'Number', inputs: { value: 5 } } };
    expectPromptError(await postJson(h, '/api/prompt', { prompt: noOutputs }), 400, 'invalid_workflow', 'prompt_no_outputs');
    expectPromptError(await postJson(h, '/api/prompt', { prompt: {} }), 400, 'invalid_workflow', 'prompt_no_outputs');
    expect(h.runs.Number ?? 0).toBe(0);
  });

  it('refuses a missing or malformed prompt, a UI export and bad asset references, in the reference shape', async () => {
    await start({ accounts: ACCOUNTS });
    const alice = asCloud(h, 'key-alice');
    const noPrompt = expectPromptError(await postJson(alice, '/api/prompt', { extra_data: {} }), 400, 'invalid_request', 'no_prompt');
    expect(noPrompt.node_errors).toEqual({});
    expectPromptError(await postJson(alice, '/api/prompt', { prompt: null }), 400, 'invalid_request', 'no_prompt');
    for (const prompt of [3, 'text', [sumWorkflow('x')], true]) {
      expectPromptError(await postJson(alice, '/api/prompt', { prompt }), 400, 'invalid_request', 'invalid_prompt');
    }
    for (const body of [[1], 'null', '"prompt"', '7']) {
      expectPromptError(await postJson(alice, '/api/prompt', body), 400, 'invalid_request', 'invalid_request');
    }
    let deep: unknown = 1;
    for (let i = 0; i < 80; i++) deep = { d: deep };
    expectPromptError(
      await postJson(alice, '/api/prompt', { prompt: { a: { class_type: 'Show', inputs: { value: deep } } } }),
      400,
      'invalid_request',
      'invalid_prompt',
    );
    const ui = { nodes: [{ id: 1, type: 'Show' }], links: [] };
    expectPromptError(await postJson(alice, '/api/prompt', { prompt: ui }), 400, 'workflow_format_ui', 'workflow_format_ui');

    // A core/ASSET reference must name a live asset of the caller: bob's asset is not alice's.
    const { body: bobsAsset } = await upload(asKey(h, 'key-bob'), 'bytes', { content_type: 'image/png', file_path: 'b.png' });
    const load = (ref: unknown) => ({
      l: { class_type: 'LoadImage', inputs: { image: ref } },
      s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'x' } },
    });
    for (const [ref, type] of [
      [assetRef(bobsAsset.id), 'asset_not_found'],
      [assetRef(crypto.randomUUID()), 'asset_not_found'],
      [{ __type: 'core/ASSET', info: {} }, 'malformed_asset_reference'],
    ] as const) {
      const body = expectPromptError(await postJson(alice, '/api/prompt', { prompt: load(ref) }), 400, 'missing_asset', type);
      expect(body.node_errors.l).toEqual({
        errors: [{ type, message: expect.any(String), details: 'image', extra_info: { input_name: 'image' } }],
        dependent_outputs: [],
        class_type: 'LoadImage',
      });
    }
    expect(h.runs.Show ?? 0).toBe(0);
  });

  it('malformed JSON and wrong field types: 400 naming the problem; nothing is queued', async () => {
    await start();
    expectPromptError(await postJson(h, '/api/prompt', '{"prompt": '), 400, 'malformed_request', 'malformed_request');
    const prompt = sumWorkflow('w');
    for (const [field, value] of [
      ['extra_data', 'key'],
      ['extra_data', [1]],
      ['extra_data', { api_key_platform_org: 42 }],
      ['client_id', 7],
      ['number', 'first'],
      ['front', 'yes'],
      ['prompt_id', 12],
      ['partial_execution_targets', 'w4'],
    ] as const) {
      const body = expectPromptError(await postJson(h, '/api/prompt', { prompt, [field]: value }), 400, 'invalid_request', 'invalid_request');
      expect(body.message).toContain(field);
    }
    const partial = await postJson(h, '/api/prompt', { prompt, partial_execution_targets: ['w4'] });
    expectPromptError(partial, 400, 'invalid_request', 'invalid_request');
    const conflict = await postJson(h, '/api/prompt', { prompt, extra_data: { api_key_platform_org: 'a', api_key_comfy_org: 'b' } });
    expectPromptError(conflict, 400, 'invalid_request', 'invalid_request');
    expect((await getJson(h, '/api/prompt')).body).toEqual({ exec_info: { queue_remaining: 0 } });
    expect((await getJson(h, '/api/jobs')).body.pagination.total).toBe(0);
  });
});
