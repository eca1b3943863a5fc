// The other half of examples/lambda.ts: a long-running process (a container,
// an instance, the machine next to `sam local`) that opens the same storage
// and runs the jobs the function queues, and sweeps expired assets and jobs.
// It serves no HTTP; several may run on one PostgreSQL database. Run:
// GRAPHRUN_DATABASE_URL=postgres://... GRAPHRUN_BLOBS_URL=s3://bucket/prefix npx tsx examples/lambda-worker.ts
import { createService } from '../index.ts';
import { dataDir, openStorage } from './lambda-storage.ts';

// runJobs (the default) makes it poll the storage for queued jobs once a second.
export const service = await createService({ storage: await openStorage() });
console.log(`graphrun worker: running jobs from ${process.env.GRAPHRUN_DATABASE_URL ? 'PostgreSQL' : dataDir}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // Jobs under way go back to the queue for the next worker.
  process.once(signal, () => void service.close().then(() => process.exit(0)));
}
