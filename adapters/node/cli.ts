// The `graphrun` command (also `npm start`). `serve` answers HTTP and
// WebSocket (and runs jobs unless --no-run-jobs); `runner` only runs jobs,
// beside API-only instances on the same storage. Storage: SQLite and blob
// files under --data, or PostgreSQL (--database) and an S3 bucket (--blobs).

import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunnerLockError } from '../../index.ts';
import { CliUsageError, parseCliArgs, type RunnerCliOptions, type ServeCliOptions, USAGE } from './cli-options.ts';
import { createCliService, stopOnSignals } from './cli-service.ts';
import { describeError, describeStorage, openCliStorage } from './cli-storage.ts';
import { serve } from './server.ts';

async function runServe(options: ServeCliOptions): Promise<void> {
  const storage = await openCliStorage(options);
  // The service owns the storage from here: service.close() closes both halves.
  const service = await createCliService(storage, options, { token: options.token, runJobs: options.runJobs });
  const running = await serve(service, { host: options.host, port: options.port });
  process.stdout.write(`graphrun listening on ${running.url}\n`);
  process.stderr.write(`graphrun: ${describeStorage(options)}\n`);
  stopOnSignals(() => running.close().then(() => service.close()));
}

async function runRunner(options: RunnerCliOptions): Promise<void> {
  const storage = await openCliStorage(options);
  const service = await createCliService(storage, options);
  // Nothing else may hold the event loop (no server; the service's timers may be unref'd): this keeps the process up until a signal.
  const alive = setInterval(() => {}, 2 ** 31 - 1);
  process.stdout.write(`graphrun runner: running jobs from ${describeStorage(options)}\n`);
  stopOnSignals(async () => {
    await service.close();
    clearInterval(alive);
  });
}

/** The message for a failed start; a lock held elsewhere says what to do instead. */
function startFailure(err: unknown, command: 'serve' | 'runner'): string {
  if (!(err instanceof RunnerLockError)) return describeError(err);
  // The storage's wording names the library option; the CLI user needs the flag.
  const message = err.message.replace(/ Stop it first, or start this one with runJobs: false.*$/, '');
  return command === 'serve'
    ? `${message} Stop it first, or add --no-run-jobs to serve the API only beside it.`
    : `${message} Stop it first; beside it, run "graphrun serve --no-run-jobs" for the API.`;
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
    if (command.command === 'runner') await runRunner(command.options);
    else await runServe(command.options);
  } catch (err) {
    process.stderr.write(`graphrun: could not start: ${startFailure(err, command.command)}\n`);
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
