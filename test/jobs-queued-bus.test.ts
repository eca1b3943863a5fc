// A job queued on an API-only instance reaches the runners through the
// storage's event bus (PostgreSQL NOTIFY on the `queue` channel): the runner
// looks for work when it hears of it instead of at its next poll. Shown with
// two services on one real PostgreSQL (test/helpers/postgres.ts), B's bus
// recording what its `queue` subscription hears.
import { afterEach, describe, expect, it } from 'vitest';
import { createService, type Service, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import type { EventBus } from '../storage/types.ts';
import { until } from './helpers/jobs.ts';
import { usePostgres } from './helpers/postgres.ts';

const server = usePostgres();
const services: Service[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

describe('a job queued on another instance', () => {
  it("is announced on the bus's queue channel, which the runner hears and runs it from", async () => {
    const url = await server.newDatabase();
    const blobs = createMemoryBlobStore();
    const api = await createService({
      storage: await createPostgresStorage({ connectionString: url, blobs }),
      runJobs: false,
      logger: silentLogger,
      sweepIntervalMs: 0,
    });
    services.push(api);
    const heard: string[] = [];
    const storage = await createPostgresStorage({ connectionString: url, blobs });
    const bus = storage.events!;
    // The runner's bus, recording each `queue` message before the scheduler hears it.
    const recording: EventBus = {
      ...bus,
      publish: (channel, payload) => bus.publish(channel, payload),
      subscribe: (channel, listener, onLive) =>
        bus.subscribe(
          channel,
          (payload) => {
            if (channel === 'queue') heard.push(payload);
            listener(payload);
          },
          onLive,
        ),
      close: () => bus.close(),
    };
    const runner = await createService({ storage: { ...storage, events: recording }, logger: silentLogger, sweepIntervalMs: 0 });
    services.push(runner);

    const res = await api.fetch(
      new Request('http://graphrun.test/api/v2/jobs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          workflow: { i: { class_type: 'PrimitiveInt', inputs: { value: 3 } }, p: { class_type: 'PreviewAny', inputs: { source: ['i', 0] } } },
        }),
      }),
    );
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await until('the runner hears of the job', () => heard.length > 0, 20_000);
    await until(
      'the job succeeds',
      async () =>
        ((await (await api.fetch(new Request(`http://graphrun.test/api/v2/jobs/${id}`))).json()) as { status: string }).status === 'succeeded',
      20_000,
    );
  });
});
