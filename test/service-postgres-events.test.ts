// Two services on one PostgreSQL database (test/helpers/postgres.ts): A
// serves the API only (runJobs: false), B runs the jobs on the in-process
// engine. A job submitted to A and run by B is followed live on A, through
// the storage's event bus (LISTEN/NOTIFY): its SSE stream gets progress, a
// preview too large for a NOTIFY, its output and its end; its `/ws` clients
// get the engine's messages; and all of it keeps flowing after A's LISTEN
// connection is ended by the server. The job waits at gates (Relay), so the
// test knows it is running while it looks, and nothing waits for time. Last,
// A's LISTEN connection is kept from coming back while the job ends, so its
// end is lost for certain: A's stream and /ws learn it from the row.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { toBase64 } from '../lib/base64.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPgEventBus } from '../storage/sql/pg-event-bus.ts';
import { createPostgresStorage, type PgEventBus } from '../storage/sql/postgres.ts';
import type { Database } from '../storage/sql/schema.ts';
import type { BlobStore } from '../storage/types.ts';
import { type Harness, MODES, type Mode, type OpenStorage, startHarness } from './helpers/harness.ts';
import { expectOutputShape, jobNow, submitOk } from './helpers/jobs.ts';
import { usePostgres } from './helpers/postgres.ts';
import { createRelayNode, previewBytes, type RelayGates, relayWorkflow } from './helpers/relay-node.ts';
import { eventsOf, openEvents, type SseItem, type SseReader } from './helpers/sse-client.ts';
import { connectWs, type WsClient } from './helpers/ws-client.ts';

const server = usePostgres();
/** A bound on a whole wait on a machine whose two cores run other test files too. */
const BOUND_MS = 20_000;

interface Pair {
  /** API only. */
  a: Harness;
  /** Runs the jobs. */
  b: Harness;
  gates: RelayGates;
  busA: PgEventBus;
  url: string;
}

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

/**
 * A's event bus over a LISTEN connection the test can keep from coming
 * back (`hold`), so what is sent meanwhile is lost for certain.
 */
interface HeldReconnect {
  hold(): void;
  release(): void;
}

/** A's storage: PostgreSQL without its own bus, and a bus whose LISTEN connections wait while held. */
function heldBusStorage(url: string, blobs: BlobStore, held: { gate: Promise<void> | null }): OpenStorage {
  return async () => {
    const storage = await createPostgresStorage({ connectionString: url, blobs, events: false });
    const pool = new pg.Pool({ connectionString: url });
    // As openPgPool does: the LISTEN session this test ends may report once more after the bus let
    // it go, through the pool, whose 'error' unheard would be an uncaught exception.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const connect = async () => {
      await held.gate;
      return pool.connect();
    };
    const events = createPgEventBus({ db, schema: null, connect });
    // After the service has closed the bus and the metadata.
    closers.unshift(() => db.destroy());
    return { ...storage, events };
  };
}

async function startPair(modeA: Mode, reconnect?: HeldReconnect & { held: { gate: Promise<void> | null } }): Promise<Pair> {
  const url = await server.newDatabase();
  // One blob store for both, as instances sharing a bucket would.
  const blobs = createMemoryBlobStore();
  const relay = createRelayNode();
  const b = await startHarness('in-process', { engine: createLocalEngine({ nodes: [...builtinNodes, relay.node] }), progressIntervalMs: 0 }, () =>
    createPostgresStorage({ connectionString: url, blobs }),
  );
  closers.push(() => b.close());
  let busA: PgEventBus | undefined;
  const a = await startHarness(
    modeA,
    // A validates workflows against the same nodes; it never runs them.
    { engine: createLocalEngine({ nodes: [...builtinNodes, createRelayNode().node] }), runJobs: false, progressIntervalMs: 0 },
    async (...args) => {
      const storage = reconnect
        ? await heldBusStorage(url, blobs, reconnect.held)(...args)
        : await createPostgresStorage({ connectionString: url, blobs });
      busA = storage.events as PgEventBus;
      return storage;
    },
  );
  closers.push(() => a.close());
  return { a, b, gates: relay.gates, busA: busA!, url };
}

/** Reads events until `done` says it has what it needs; returns them all. */
async function readUntil(sse: SseReader, done: (events: Array<Extract<SseItem, { kind: 'event' }>>) => boolean) {
  const events: Array<Extract<SseItem, { kind: 'event' }>> = [];
  const deadline = Date.now() + BOUND_MS;
  while (!done(events)) {
    const e = await sse.nextEvent(Math.max(1, deadline - Date.now()));
    if (e === null) throw new Error(`stream ended early: ${JSON.stringify(events.map((x) => x.event))}`);
    events.push(e);
  }
  return events;
}

const byType = (events: Array<{ event: string }>, type: string) => events.filter((e) => e.event === type) as Array<{ event: string; json: any }>;

describe.each(MODES)('job events across instances on PostgreSQL (API instance %s)', (mode) => {
  it('an SSE client on the API-only instance follows a job the other one runs: progress while running, a large preview intact, the output, the end', async () => {
    const { a, gates } = await startPair(mode);
    const job = await submitOk(a, relayWorkflow('sse', 12_000));
    const { sse } = await openEvents(a, job.id);
    // The first event comes once A listens to the job: what B sends from here on reaches it.
    const first = await sse!.nextEvent(BOUND_MS);
    expect(first?.event).toBe('status');
    expect(['queued', 'running']).toContain(first?.json.status);
    gates.open('sse', 'start');

    const live = await readUntil(
      sse!,
      (events) =>
        byType(events, 'progress').some((e) => e.json.step === 1) && byType(events, 'preview').length > 0 && byType(events, 'output').length > 0,
    );
    // The job waits at its second gate: still running by its row.
    expect((await jobNow(a, job.id)).status).toBe('running');
    expect(byType(live, 'progress').find((e) => e.json.step === 1)?.json).toMatchObject({ step: 1, steps: 2, current_node: 'r', value: 0.5 });
    const [preview] = byType(live, 'preview');
    const expected = toBase64(previewBytes(12_000));
    expect(expected.length).toBeGreaterThan(8000);
    expect(preview.json).toEqual({ node_id: 'r', content_type: 'image/png', data_base64: expected });
    const [output] = byType(live, 'output');
    expectOutputShape(output.json, job.id);
    expect(output.json).toMatchObject({ node_id: 'r', content_type: 'image/png', name: 'relay.png' });
    expect(byType(live, 'status').every((e) => e.json.status !== 'succeeded')).toBe(true);

    gates.open('sse', 'end');
    const rest = eventsOf(await sse!.readToEnd(BOUND_MS));
    expect(rest.at(-1)).toMatchObject({ event: 'status', json: { status: 'succeeded', id: job.id } });
    expect(rest.at(-1)?.json.outputs.map((o: { id: string }) => o.id)).toEqual([output.json.id]);
  });
});

describe('job events across instances on PostgreSQL', () => {
  it('a /ws client on the API-only instance gets the run of a job the other one runs: start, node, progress, preview, executed, success', async () => {
    const { a, gates } = await startPair('node-server');
    const ws: WsClient = await connectWs(a.base);
    closers.push(() => ws.close());
    // The greeting comes once A listens to the account.
    await ws.waitFor('the greeting', (f) => f.kind === 'text' && f.type === 'status', BOUND_MS);
    const job = await submitOk(a, relayWorkflow('ws', 12_000));
    gates.open('ws', 'start');
    gates.open('ws', 'end');
    await ws.waitFor('execution_success', (f) => f.kind === 'text' && f.type === 'execution_success' && f.data.prompt_id === job.id, BOUND_MS);

    const messages = ws.jobMessages(job.id);
    const types = messages.map((m) => m.type);
    const at = (type: string) => types.indexOf(type);
    for (const type of ['execution_start', 'executing', 'progress', 'executed', 'execution_success']) expect(types).toContain(type);
    expect(at('execution_start')).toBeLessThan(at('executing'));
    expect(at('executing')).toBeLessThan(at('progress'));
    expect(at('progress')).toBeLessThan(at('executed'));
    expect(at('executed')).toBeLessThan(at('execution_success'));
    expect(messages[at('executing')].data).toMatchObject({ node: 'r', prompt_id: job.id });
    expect(messages[at('progress')].data).toMatchObject({ value: 1, max: 2, node: 'r', prompt_id: job.id });
    // The output committed before `executed` is named by its content, as on the instance that ran it.
    const image = messages[at('executed')].data.output.images[0];
    expect(image).toMatchObject({ subfolder: '', type: 'output' });
    expect(image.filename).not.toBe('relay.png');
    // The preview, 12,000 bytes, came by reference and is whole: PREVIEW_IMAGE, PNG.
    const [frame] = ws.binaries();
    expect(frame?.type).toBe(1);
    const view = new DataView(frame.bytes.buffer, frame.bytes.byteOffset);
    expect(view.getUint32(4)).toBe(2);
    expect(Buffer.from(frame.bytes.subarray(8)).equals(Buffer.from(previewBytes(12_000)))).toBe(true);
  });

  it('keeps following a job after the server ends the LISTEN connection: the bus listens again and events flow', async () => {
    const { a, gates, busA, url } = await startPair('in-process');
    const job = await submitOk(a, relayWorkflow('again'));
    const { sse } = await openEvents(a, job.id);
    await sse!.nextEvent(BOUND_MS);
    gates.open('again', 'start');
    await readUntil(sse!, (events) => byType(events, 'progress').some((e) => e.json.step === 1));

    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    closers.push(() => admin.end());
    // The second stream is opened once A knows its session ended; before that, A would count the old one as listening.
    const lostConnection = new Promise((resolve) => busA.onError?.(resolve));
    const ended = await admin.query(
      "select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = 'graphrun events' and datname = current_database()",
    );
    // A's LISTEN session, and the runner's (it hears the queue channel): both end, both come back.
    expect(ended.rows.length).toBeGreaterThanOrEqual(1);
    expect(ended.rows.every((row) => row.ok === true)).toBe(true);
    await lostConnection;
    // A second stream's first event comes once A listens again, on a new session (the first one's channel with it).
    const { sse: second } = await openEvents(a, job.id);
    expect((await second!.nextEvent(BOUND_MS))?.json.status).toBe('running');
    expect(busA.stats().sessions).toBe(2);

    gates.open('again', 'end');
    const rest = eventsOf(await sse!.readToEnd(BOUND_MS));
    // Past step 1 (value 0.5) only the bus can tell: the row is read again only for the status, which ends the stream.
    expect(byType(rest, 'progress').some((e) => e.json.value > 0.5)).toBe(true);
    expect(rest.at(-1)).toMatchObject({ event: 'status', json: { status: 'succeeded' } });
    await second!.readToEnd(BOUND_MS);
  });

  it('after a gap in which the end of a run was lost, SSE streams and /ws clients on the API-only instance learn it from the row', async () => {
    const held = { gate: null as Promise<void> | null };
    let release = () => {};
    const reconnect = {
      held,
      hold() {
        held.gate = new Promise<void>((resolve) => {
          release = resolve;
        });
      },
      release: () => release(),
    };
    const { a, b, gates, url, busA } = await startPair('node-server', reconnect);
    const ws = await connectWs(a.base);
    closers.push(() => ws.close());
    await ws.waitFor('the greeting', (f) => f.kind === 'text' && f.type === 'status', BOUND_MS);
    const job = await submitOk(a, relayWorkflow('gap'));
    const { sse } = await openEvents(a, job.id);
    await sse!.nextEvent(BOUND_MS);
    gates.open('gap', 'start');
    await ws.waitFor('progress', (f) => f.kind === 'text' && f.type === 'progress' && f.data.prompt_id === job.id, BOUND_MS);

    // A's LISTEN connection ends and cannot come back; the job ends meanwhile (B's own stream says when).
    reconnect.hold();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    closers.push(() => admin.end());
    const lostConnection = new Promise((resolve) => busA.onError?.(resolve));
    await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'graphrun events' and datname = current_database()",
    );
    await lostConnection;
    const { sse: onB } = await openEvents(b, job.id);
    await onB!.nextEvent(BOUND_MS);
    gates.open('gap', 'end');
    expect(eventsOf(await onB!.readToEnd(BOUND_MS)).at(-1)?.json.status).toBe('succeeded');
    const lost = ws.frames.length;
    expect(ws.jobMessages(job.id).map((m) => m.type)).not.toContain('execution_success');

    // Back: both re-read the row. The stream ends on the job's status, /ws says the run ended and counts the queue again.
    reconnect.release();
    expect(eventsOf(await sse!.readToEnd(BOUND_MS)).at(-1)).toMatchObject({ event: 'status', json: { status: 'succeeded' } });
    await ws.waitFor('execution_success', (f) => f.kind === 'text' && f.type === 'execution_success' && f.data.prompt_id === job.id, BOUND_MS, lost);
    await ws.waitFor('a recount', (f) => f.kind === 'text' && f.type === 'status' && f.data.status.exec_info.queue_remaining === 0, BOUND_MS, lost);
  });
});
