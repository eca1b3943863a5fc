// The `graphrun` command (also `npm start`): serves the service over HTTP and
// WebSocket with SQLite metadata and blobs on disk under --data.
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createService } from '../../core/index.ts';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../../storage/sql/sqlite.ts';
import { CliUsageError, parseCliArgs, USAGE, type ServeCliOptions } from './cli-options.ts';
import { serve } from './server.ts';

async function runServe({ host, port, data, token, allowPrivateUrls }: ServeCliOptions): Promise<void> {
  await mkdir(data, { recursive: true });
  const blobs = await createFsBlobStore({ dir: join(data, 'blobs') });
  const storage = await createSqliteStorage({ filename: join(data, 'graphrun.db'), blobs });
  // The service owns the storage from here: service.close() closes both halves.
  // Without the switch the default engine (private addresses refused) runs the jobs.
  const engine = allowPrivateUrls ? createLocalEngine({ settings: { allowPrivateUrls: true } }) : undefined;
  const service = await createService({ storage, token, engine });
  if (allowPrivateUrls) process.stderr.write('graphrun: LoadImageFromURL may fetch private, loopback and link-local addresses\n');
  const running = await serve(service, { host, port });
  process.stdout.write(`graphrun listening on ${running.url}\n`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    // A second Ctrl-C means "now": do not wait for a slow shutdown.
    if (stopping) process.exit(1);
    stopping = true;
    process.stderr.write(`graphrun: ${signal}, shutting down\n`);
    running
      .close()
      .then(() => service.close())
      .then(
        () => process.exit(0),
        (err) => {
          process.stderr.write(`graphrun: shutdown failed: ${err instanceof Error ? err.message : String(err)}\n`);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** Runs the CLI; usage mistakes exit 2, start-up failures exit 1. */
export async function main(argv: readonly string[] = process.argv.slice(2), env = process.env): Promise<void> {
  let command;
  try {
    command = parseCliArgs(argv, env);
  } catch (err) {
    if (!(err instanceof CliUsageError)) throw err;
    process.stderr.write(`graphrun: ${err.message}\nRun "graphrun --help" for usage.\n`);
    process.exit(2);
  }
  if (command.command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  try {
    await runServe(command.options);
  } catch (err) {
    process.stderr.write(`graphrun: could not start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

// Run when executed directly (tsx adapters/node/cli.ts); bin/graphrun.js imports and calls main.
function isEntry(): boolean {
  try {
    return realpathSync(resolve(process.argv[1] ?? '')) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}
if (isEntry()) await main();
