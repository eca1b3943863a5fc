// Integers beyond 2^53 (seeds up to 2^64 - 1) stay exact from submission
// through validation, storage, the engine and every answer that echoes them:
// lib/json.ts, then both surfaces on SQLite and memory storage, in process
// and through a real server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineNode } from '../engine/local/define-node.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { parseJson, stringifyJson } from '../lib/json.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { waitForJob } from './helpers/jobs.ts';
import { createTestNodes } from './helpers/local-nodes.ts';

const U64_MAX = '18446744073709551615';
const ABOVE_2_53 = '9007199254740993';

describe('lib/json', () => {
  it('reads integers a double cannot hold as BigInt, and everything else as JSON.parse does', () => {
    const text = `{"max":${U64_MAX},"odd":${ABOVE_2_53},"neg":-${ABOVE_2_53},"safe":9007199254740991,"float":0.30000000000000004,"exp":1e21,"z":-0,"s":"${U64_MAX}","a":[1,2.5,${U64_MAX}]}`;
    const value = parseJson(text) as Record<string, unknown>;
    expect(value.max).toBe(18446744073709551615n);
    expect(value.odd).toBe(9007199254740993n);
    expect(value.neg).toBe(-9007199254740993n);
    const plain = JSON.parse(text);
    for (const key of ['safe', 'float', 'exp', 'z', 's']) expect(Object.is(value[key], plain[key]), key).toBe(true);
    expect(value.a).toEqual([1, 2.5, 18446744073709551615n]);
    expect(stringifyJson(value)).toBe(text.replace('-0', '0').replace('1e21', '1e+21'));
  });

  it('keeps JSON.parse semantics on the lossless path: last duplicate wins, __proto__ is data, bad text is a SyntaxError', () => {
    const value = parseJson(`{"a":1,"a":${U64_MAX},"__proto__":{"x":1}}`) as Record<string, unknown>;
    expect(value.a).toBe(18446744073709551615n);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['a', '__proto__']);
    expect(() => parseJson(`{"a":${U64_MAX},}`)).toThrow(SyntaxError);
    expect(() => parseJson('{"a":1,}')).toThrow(SyntaxError);
  });

  it('writes what JSON.stringify writes when no BigInt is in the value', () => {
    const value = { s: 'a"\u0000\n', n: [1, -0, 1e21, Number.NaN, null], u: undefined, d: new Date(0), nested: { toJSON: () => 'tj' } };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
    expect(stringifyJson({ seed: 2n ** 64n - 1n, list: [1n] })).toBe(`{"seed":${U64_MAX},"list":[1]}`);
    const cyclic: Record<string, unknown> = { n: 1n };
    cyclic.self = cyclic;
    expect(() => stringifyJson(cyclic)).toThrow();
  });
});

const STORAGES = ['sqlite', 'memory'] as const;

/** Saves the value it was given, as the engine holds it, in a text output. */
const saveValue = defineNode({
  name: 'SaveValue',
  category: 'test',
  output_node: true,
  required: { value: ['INT', {}] },
  async run({ value }, ctx) {
    await ctx.commitOutput({ name: 'value.txt', type: 'text', content_type: 'text/plain', body: new TextEncoder().encode(String(value)) });
    return { outputs: [] };
  },
});

describe.each(MODES.flatMap((mode) => STORAGES.map((storage) => [mode, storage] as const)))('through the API (%s, %s storage)', (mode, storage) => {
  let h: Harness;
  beforeAll(async () => {
    const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes, saveValue] });
    h = await startHarness(mode, storage === 'memory' ? { engine, storage: createMemoryStorage() } : { engine });
  });
  afterAll(() => h.close());

  const workflowText = `{"n":{"class_type":"SaveValue","inputs":{"value":${U64_MAX}}},"m":{"class_type":"SaveValue","inputs":{"value":${ABOVE_2_53}}}}`;
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    h.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('v2: the job runs on the exact values, and its workflow and metadata read back digit for digit', async () => {
    const res = await post('/api/v2/jobs', `{"workflow":${workflowText},"metadata":{"row":${U64_MAX}}}`);
    const created = await res.text();
    expect(res.status, created).toBe(201);
    expect(created).toContain(`"metadata":{"row":${U64_MAX}}`);
    const { id } = JSON.parse(created);
    const job = await waitForJob(h, id, ['succeeded', 'failed'], 30_000);
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    const texts: Record<string, string> = {};
    for (const output of job.outputs) texts[output.node_id] = await (await h.fetch(output.url)).text();
    expect(texts).toEqual({ n: U64_MAX, m: ABOVE_2_53 });
    const stored = await (await h.fetch(`/api/v2/jobs/${id}/workflow`)).text();
    expect(stored).toBe(`{"workflow":${workflowText},"format":"api"}`);
    expect(await (await h.fetch(`/api/v2/jobs/${id}`)).text()).toContain(`"metadata":{"row":${U64_MAX}}`);
  });

  it('v2: an integer over an input maximum is refused naming its exact value', async () => {
    const res = await post(
      '/api/v2/jobs',
      `{"workflow":{"a":{"class_type":"Number","inputs":{"value":${ABOVE_2_53}}},"b":{"class_type":"Show","inputs":{"value":["a",0]}}}}`,
    );
    const text = await res.text();
    expect(res.status).toBe(422);
    expect(JSON.parse(text).error.code).toBe('invalid_workflow');
    expect(text).toContain(`Value ${ABOVE_2_53} bigger than max of 100`);
  });

  it('/api/prompt: history shows the submitted digits; a refusal names them', async () => {
    const res = await h.fetch('/api/prompt', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"prompt":${workflowText}}` });
    const answer = await res.text();
    expect(res.status, answer).toBe(200);
    const { prompt_id } = JSON.parse(answer);
    await waitForJob(h, prompt_id, 'succeeded', 30_000);
    const history = await (await h.fetch(`/api/history/${prompt_id}`)).text();
    expect(history).toContain(`"value":${U64_MAX}`);
    expect(history).toContain(`"value":${ABOVE_2_53}`);

    const refused = await h.fetch('/api/prompt', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"prompt":{"a":{"class_type":"Number","inputs":{"value":${U64_MAX}}},"b":{"class_type":"Show","inputs":{"value":["a",0]}}}}`,
    });
    const body = await refused.text();
    expect(refused.status).toBe(400);
    expect(body).toContain('value_bigger_than_max');
    expect(body).toContain(`"received_value":${U64_MAX}`);
  });
});
