// POST /api/prompt admission: partner nodes and their key, client-chosen
// prompt ids, Idempotency-Key, credits (402), the full queue and an inactive
// subscription (429) in the reference's refusal shape; GET /api/prompt's
// queue_remaining per account.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import {
  ACCOUNTS,
  asCloud,
  type CloudJobsHarness,
  expectCloudError,
  expectPromptError,
  getJson,
  postJson,
  promptOk,
  startCloudJobs,
} from './helpers/cloud-jobs.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, jobNow, waitForJob } from './helpers/jobs.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';

const partnerWorkflow = { p1: { class_type: 'Number', inputs: { value: 3 } }, p2: { class_type: 'PartnerEcho', inputs: { value: ['p1', 0] } } };

describe.each(MODES)('POST /api/prompt admission (%s)', (mode) => {
  let h: CloudJobsHarness;
  const start = (options: Partial<ServiceOptions> = {}) => startCloudJobs(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  it('partner nodes need extra_data.api_key_platform_org (or its alias), which reaches the engine only', async () => {
    await start();
    const refused = expectPromptError(await postJson(h, '/api/prompt', { prompt: partnerWorkflow }), 400, 'invalid_workflow', 'api_key_required');
    expect(refused.message).toContain('api_key_platform_org');
    expect(refused.message).toContain('PartnerEcho');
    expect(refused.node_errors).toEqual({
      p2: { errors: [expect.objectContaining({ type: 'api_key_required' })], dependent_outputs: [], class_type: 'PartnerEcho' },
    });
    const empty = await postJson(h, '/api/prompt', { prompt: partnerWorkflow, extra_data: { api_key_platform_org: '' } });
    expectPromptError(empty, 400, 'invalid_workflow', 'api_key_required');

    const ok = await promptOk(h, partnerWorkflow, { extra_data: { api_key_platform_org: 'pk-1', extra_pnginfo: { workflow: {} } } });
    await waitForJob(h, ok.prompt_id, 'succeeded');
    expect(h.extraSeen.get(ok.prompt_id)).toEqual({ api_key_platform_org: 'pk-1' });
    const alias = await promptOk(
      h,
      { ...partnerWorkflow, p1: { class_type: 'Number', inputs: { value: 4 } } },
      { extra_data: { api_key_comfy_org: 'pk-2' } },
    );
    await waitForJob(h, alias.prompt_id, 'succeeded');
    expect(h.extraSeen.get(alias.prompt_id)).toEqual({ api_key_platform_org: 'pk-2' });
    // The key is never stored: not in the workflow v2 shows.
    expect(JSON.stringify((await getJson(h, `/api/v2/jobs/${ok.prompt_id}/workflow`)).body)).not.toContain('pk-1');
    // A workflow without partner nodes runs without a key.
    expect(h.extraSeen.get((await promptOk(h, sumWorkflow('n'))).prompt_id)).toBeUndefined();
  });

  it('a client-chosen prompt_id becomes the job id; a used or malformed one is refused', async () => {
    await start({ accounts: ACCOUNTS });
    const alice = asCloud(h, 'key-alice');
    const id = crypto.randomUUID();
    const body = await promptOk(alice, sumWorkflow('i'), { prompt_id: id });
    expect(body.prompt_id).toBe(id);
    expect((await jobNow(asKey(h, 'key-alice'), id)).id).toBe(id);
    for (const who of [alice, asCloud(h, 'key-bob')]) {
      const again = expectPromptError(
        await postJson(who, '/api/prompt', { prompt: sumWorkflow('j'), prompt_id: id }),
        400,
        'invalid_request',
        'invalid_prompt_id',
      );
      expect(again.message).toContain('in use');
    }
    for (const bad of ['not-a-uuid', id.toUpperCase(), '']) {
      expectPromptError(
        await postJson(alice, '/api/prompt', { prompt: sumWorkflow('k'), prompt_id: bad }),
        400,
        'invalid_request',
        'invalid_prompt_id',
      );
    }
    // Two submissions racing for one new id: exactly one wins.
    const raced = crypto.randomUUID();
    const results = await Promise.all([1, 2, 3].map((v) => postJson(alice, '/api/prompt', { prompt: sumWorkflow('r', v), prompt_id: raced })));
    expect(results.map((r) => r.res.status).sort()).toEqual([200, 400, 400]);
  });

  it('Idempotency-Key: a reused key is refused with 400 and queues nothing', async () => {
    await start();
    const key = crypto.randomUUID();
    await promptOk(withKey(h, key), waitWorkflow(1, 0));
    const again = await postJson(h, '/api/prompt', { prompt: waitWorkflow(2, 0) }, { 'idempotency-key': key });
    expectPromptError(again, 400, 'idempotency_key_reuse', 'idempotency_key_reuse');
    expect((await getJson(h, '/api/jobs')).body.pagination.total).toBe(1);
  });

  it('402 without credits, 429 queue_full and 429 subscription_inactive, in the same shape', async () => {
    const broke = new Set(['bob']);
    const inactive = new Set<string>();
    await start({
      accounts: ACCOUNTS,
      maxQueueDepth: 1,
      tierLimits: { free: 0 }, // nothing starts: the queue stays full
      credits: { hasCredits: async (id) => !broke.has(id) },
      subscriptions: { isActive: async (id) => !inactive.has(id) },
    });
    const alice = asCloud(h, 'key-alice');
    const bob = asCloud(h, 'key-bob');
    const credits = expectPromptError(
      await postJson(bob, '/api/prompt', { prompt: sumWorkflow('b') }),
      402,
      'insufficient_credits',
      'insufficient_credits',
    );
    expect(credits.node_errors).toEqual({});
    await promptOk(alice, sumWorkflow('a'));
    const full = await postJson(alice, '/api/prompt', { prompt: sumWorkflow('a', 2) });
    expectPromptError(full, 429, 'queue_full', 'queue_full');
    expect(full.res.headers.get('retry-after')).toMatch(/^\d+$/);
    inactive.add('alice');
    const lapsed = await postJson(alice, '/api/prompt', { prompt: sumWorkflow('a', 3) });
    expectPromptError(lapsed, 429, 'subscription_inactive', 'subscription_inactive');
    expect(lapsed.res.headers.get('retry-after')).toBe('60');
    // Reading is still allowed.
    expect((await getJson(alice, '/api/prompt')).body).toEqual({ exec_info: { queue_remaining: 1 } });
    const anonymous = await postJson(h, '/api/prompt', { prompt: sumWorkflow('x') });
    expectPromptError(anonymous, 401, 'unauthorized', 'unauthorized');
    expectCloudError(await getJson(asCloud(h, 'wrong'), '/api/prompt'), 401, 'unauthorized');
  });

  it("GET /api/prompt counts the caller's queued and running jobs only", async () => {
    await start({ accounts: ACCOUNTS });
    const alice = asCloud(h, 'key-alice');
    const bob = asCloud(h, 'key-bob');
    const running = await promptOk(alice, waitWorkflow(1, 60_000));
    await waitForJob(asKey(h, 'key-alice'), running.prompt_id, 'running');
    await promptOk(alice, waitWorkflow(2, 60_000));
    await promptOk(bob, waitWorkflow(3, 60_000));
    const { res, body } = await getJson(alice, '/api/prompt');
    expect(res.status).toBe(200);
    expect(body).toEqual({ exec_info: { queue_remaining: 2 } });
    expect((await getJson(bob, '/prompt')).body).toEqual({ exec_info: { queue_remaining: 1 } });
    await postJson(alice, '/api/queue', { clear: true });
    await postJson(alice, '/api/interrupt', {});
    await postJson(bob, '/api/queue', { clear: true });
    await waitForJob(asKey(h, 'key-alice'), running.prompt_id, 'canceled');
    expect((await getJson(alice, '/api/prompt')).body).toEqual({ exec_info: { queue_remaining: 0 } });
  });
});

const withKey = <H extends CloudJobsHarness>(h: H, key: string): H => ({
  ...h,
  fetch: (p: string, init: RequestInit = {}) =>
    h.fetch(p, { ...init, headers: { ...Object.fromEntries(new Headers(init.headers)), 'idempotency-key': key } }),
});
