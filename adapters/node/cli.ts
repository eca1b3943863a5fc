// The `graphrun` command (also `npm start`). `serve` answers HTTP and
// WebSocket (and runs jobs unless --no-run-jobs); `runner` only runs jobs,
// beside API-only instances on the same storage. Storage: SQLite and blob
// files under --data, or PostgreSQL (--database) and an S3 bucket (--blobs).
// `run`, `jobs`, `cancel` and `upload` are a client of a running server (client/).

import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliUsageError, parseCliArgs, USAGE } from './cli-options.ts';
import { isClientCommand, runClient } from './client/program.ts';

/** Runs the CLI; usage mistakes exit 2, start-up failures exit 1. */
export async function main(argv: readonly string[] = process.argv.slice(2), env = process.env): Promise<void> {
  if (isClientCommand(argv)) {
    const code = await runClient(argv, env);
    // Exit now (an idle keep-alive connection must not hold the process), once what was written has gone out.
    await Promise.all([process.stdout, process.stderr].map((s) => new Promise((done) => s.write('', done))));
    process.exit(code);
  }
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
  const { runRunner, runServe, startFailure } = await import('./cli-server.ts');
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
