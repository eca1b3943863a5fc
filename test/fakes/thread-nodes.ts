// Nodes for testing the local engine's worker threads, loaded by the threads
// through `nodesModule` (and by the test, as `nodes`, for the request
// thread's side): a node that computes without a pause, one that exhausts
// its heap, one that kills its thread, and nodes that say where they ran.
import { isMainThread } from 'node:worker_threads';
import { defineNode, type LocalNode } from '../../engine/local/define-node.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';

const where = () => (isMainThread ? 'request thread' : 'worker thread');

/** Busy for `ms` without a single pause or progress step: only stopping its thread ends it early. */
const spin = defineNode({
  name: 'Spin',
  category: 'test',
  required: { ms: ['INT', { default: 100, min: 0, max: 600_000 }] },
  outputs: [{ type: 'INT' }],
  cacheable: false,
  run(inputs) {
    const until = performance.now() + Number(inputs.ms);
    let turns = 0;
    while (performance.now() < until) turns++;
    return { outputs: [turns] };
  },
});

/** Fills the JavaScript heap until the thread's limit ends it. */
const heapHog = defineNode({
  name: 'HeapHog',
  category: 'test',
  output_node: true,
  cacheable: false,
  run() {
    const kept: unknown[] = [];
    for (;;) kept.push({ at: kept.length, text: `${kept.length}`.repeat(64), list: [kept.length, kept.length + 1] });
  },
});

/** Throws from a timer: an uncaught error, which ends the thread it runs on. */
const crash = defineNode({
  name: 'Crash',
  category: 'test',
  output_node: true,
  cacheable: false,
  run() {
    setTimeout(() => {
      throw new Error('a timer threw');
    });
    return new Promise<never>(() => {});
  },
});

/** Says which thread ran it; a partner node (api_node) runs beside the service, whatever thread runs the rest. */
const whereAmI = (name: string, api_node: boolean) =>
  defineNode({ name, category: 'test', output_node: true, api_node, cacheable: false, run: () => ({ outputs: [], ui: { text: [where()] } }) });

/** Calls the `probe` setting, a function the service was given. */
const askSetting = defineNode({
  name: 'AskSetting',
  category: 'test',
  required: { text: ['STRING', { default: '' }] },
  output_node: true,
  cacheable: false,
  async run(inputs, ctx) {
    const probe = ctx.settings.probe as (text: string) => Promise<string>;
    return { outputs: [], ui: { text: [await probe(String(inputs.text)), where()] } };
  },
});

export const nodes: LocalNode[] = [...builtinNodes, spin, heapHog, crash, whereAmI('WhereAmI', false), whereAmI('PartnerWhereAmI', true), askSetting];
