// The `graphrun` command (also `npm start`): serves the service over HTTP and
// WebSocket with SQLite metadata and blobs on disk under --data.

import { realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createComfyEngine } from '../../engine/comfyui/engine.ts';
import type { Engine } from '../../engine/types.ts';
import { createService } from '../../index.ts';
import { createUpstreamMusicProvider } from '../../providers/upstream/music.ts';
import { createUpstreamVideoProvider } from '../../providers/upstream/video.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../../storage/sql/sqlite.ts';
import { CliUsageError, parseCliArgs, type ServeCliOptions, USAGE } from './cli-options.ts';
import { resolveHostWithDns } from './resolve-host.ts';
import { serve } from './server.ts';

function engineFor({ workers }: ServeCliOptions): Engine | undefined {
  if (workers.length > 0) {
    const log = (message: string, detail?: Record<string, unknown>) =>
      process.stderr.write(`graphrun: ${message} ${detail ? JSON.stringify(detail) : ''}\n`);
    return createComfyEngine({ workers, log });
  }
  // The built-in engine runs the jobs, under the service's outbound policy (below).
  return undefined;
}

async function runServe(options: ServeCliOptions): Promise<void> {
  const { host, port, data, token, allowPrivateUrls, workers, threads, musicUpstream, videoUpstream } = options;
  await mkdir(data, { recursive: true });
  const blobs = await createFsBlobStore({ dir: join(data, 'blobs') });
  const storage = await createSqliteStorage({ filename: join(data, 'graphrun.db'), blobs });
  // The service owns the storage from here: service.close() closes both halves.
  const engine = engineFor(options);
  // With workers, as many jobs run at once as the pool has slots (one per worker), also for the
  // CLI's one account (open or --token: the store's 'default' tier, otherwise limited to one job).
  const pool = workers.length > 0 ? { maxConcurrentJobs: workers.length, tierLimits: { default: workers.length } } : {};
  // One outbound policy for LoadImageFromURL, video key frames and callbacks: the switch, and names resolved with node:dns.
  const providers = {
    music: musicUpstream ? createUpstreamMusicProvider(musicUpstream) : undefined,
    video: videoUpstream ? createUpstreamVideoProvider(videoUpstream) : undefined,
  };
  const localEngine = threads === undefined ? undefined : { threadCount: threads };
  const service = await createService({ storage, token, engine, localEngine, allowPrivateUrls, resolveHost: resolveHostWithDns, ...pool, providers });
  if (musicUpstream) process.stderr.write(`graphrun: music generation forwarded to ${musicUpstream.baseUrl}\n`);
  if (videoUpstream) process.stderr.write(`graphrun: video generation forwarded to ${videoUpstream.baseUrl}\n`);
  if (workers.length > 0) process.stderr.write(`graphrun: running jobs on ${workers.length} worker(s): ${workers.join(', ')}\n`);
  else if (allowPrivateUrls)
    process.stderr.write(
      'graphrun: outbound requests (LoadImageFromURL, video key frames, callbacks) may reach private, loopback and link-local addresses\n',
    );
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
