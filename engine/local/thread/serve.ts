// The worker thread's side of the local engine: it is set up once (node set,
// settings, cache limits), then runs one job at a time through the same loop
// as the inline engine. What a job needs of the service (committing outputs,
// reading input assets, partner nodes) is asked of the request thread; what
// it reports is posted as it happens. A cancel never reaches this code: the
// request thread stops the whole thread, which is why no signal aborts here.
import { concatBytes } from '../../../lib/bytes.ts';
import type { EngineJob, ExecutionContext, InputAsset, NewOutput, OutputAsset } from '../../types.ts';
import type { LocalNode, NodeResult } from '../define-node.ts';
import { builtinNodes } from '../nodes/index.ts';
import { createRegistry } from '../registry.ts';
import { createResultCache } from '../result-cache.ts';
import { type JobEnvironment, runJob } from '../run-job.ts';
import { runsOnRequestThread } from './placement.ts';
import { type FromThread, fromWire, type ThreadCall, type ThreadSetup, type ThreadSide, type ToThread, toWire } from './protocol.ts';

export function serveThread(side: ThreadSide): void {
  let ready: Promise<Ready> | null = null;
  const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  let nextCall = 0;

  const call = (request: ThreadCall): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextCall++;
      pending.set(id, { resolve, reject });
      side.post({ t: 'call', id, ...request } as FromThread);
    });

  side.listen((message: ToThread) => {
    if (message.t === 'setup') ready = setUp(message.setup, call);
    else if (message.t === 'reply') {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.ok) waiter?.resolve(message.value);
      else waiter?.reject(fromWire(message.error));
    } else if (message.t === 'run') {
      const job = message.job;
      (async () => {
        const env = await ready!;
        await runJob(
          job as EngineJob,
          threadContext(call, (m) => side.post(m)),
          jobEnvironment(env, call),
        );
      })().then(
        () => side.post({ t: 'done' }),
        (err: unknown) => side.post({ t: 'failed', error: toWire(err) }),
      );
    }
  });
}

type Call = (request: ThreadCall) => Promise<unknown>;

type Ready = Omit<JobEnvironment, 'elsewhere'>;

async function setUp(setup: ThreadSetup, call: Call): Promise<Ready> {
  const nodes: LocalNode[] = setup.nodesModule ? (await import(setup.nodesModule)).nodes : builtinNodes;
  const settings: Record<string, unknown> = { ...setup.settings };
  // A setting the service gave as a function (a DNS resolver) stays where it was made and is called there.
  for (const name of setup.settingCalls) settings[name] = (...args: unknown[]) => call({ op: 'setting', name, args });
  return {
    registry: createRegistry(nodes),
    cache: createResultCache(setup.cache),
    settings: Object.freeze(settings),
    maxJobMemoryBytes: setup.maxJobMemoryBytes,
  };
}

function jobEnvironment(env: Ready, call: Call): JobEnvironment {
  return {
    ...env,
    elsewhere: {
      wants: (p) => runsOnRequestThread(p.node),
      run: async (p, inputs, maxBytes) => (await call({ op: 'runNode', node_id: p.id, class_type: p.class_type, inputs, maxBytes })) as NodeResult,
    },
  };
}

function threadContext(call: Call, post: (message: FromThread) => void): ExecutionContext {
  return {
    // Never aborted: a canceled job's thread is stopped from outside.
    signal: new AbortController().signal,
    emit: (event) => post({ t: 'emit', event }),
    async commitOutput(output) {
      const body = output.body instanceof Uint8Array ? output.body : await collect(output.body);
      return (await call({ op: 'commitOutput', output: { ...output, body } as NewOutput & { node_id: string; body: Uint8Array } })) as OutputAsset;
    },
    async readAsset(ref) {
      const found = (await call({ op: 'readAsset', ref })) as (Omit<InputAsset, 'body'> & { bytes: Uint8Array }) | null;
      if (!found) return null;
      const { bytes, ...asset } = found;
      return { ...asset, body: new Blob([bytes]).stream() };
    },
  };
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const part of body) parts.push(part);
  return concatBytes(parts);
}
