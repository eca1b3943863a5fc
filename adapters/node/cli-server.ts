// `graphrun serve` and `graphrun runner`: the service over the storage the
// flags name. Apart from cli.ts so that the client commands, which talk to a
// running server, do not load the whole service to start.
import { RunnerLockError, type Service } from '../../index.ts';
import { startCliDeployments } from './cli-deployments.ts';
import type { RunnerCliOptions, ServeCliOptions } from './cli-options.ts';
import { type CliHttp, createCliService, stopOnSignals } from './cli-service.ts';
import { describeError, describeStorage, openCliStorage } from './cli-storage.ts';
import { serve } from './server.ts';

/** The one service the flags describe, or with --deployments the gateway of them all (cli-deployments.ts). */
async function startService(options: RunnerCliOptions, http?: CliHttp): Promise<Service> {
  const { deployments } = options;
  if (deployments !== undefined) return startCliDeployments({ ...options, deployments }, http);
  const storage = await openCliStorage(options);
  // The service owns the storage from here: service.close() closes both halves.
  return createCliService(storage, options, http);
}

export async function runServe(options: ServeCliOptions): Promise<void> {
  const service = await startService(options, { token: options.token, operatorToken: options.operatorToken, runJobs: options.runJobs });
  const running = await serve(service, { host: options.host, port: options.port });
  process.stdout.write(`graphrun listening on ${running.url}\n`);
  process.stderr.write(`graphrun: ${describeStorage(options)}\n`);
  stopOnSignals(() => running.close().then(() => service.close()));
}

export async function runRunner(options: RunnerCliOptions): Promise<void> {
  const service = await startService(options);
  // Nothing else may hold the event loop (no server; the service's timers may be unref'd): this keeps the process up until a signal.
  const alive = setInterval(() => {}, 2 ** 31 - 1);
  const more = options.deployments ? ` and of ${options.deployments.deployments.length} more deployment(s) from ${options.deployments.file}` : '';
  process.stdout.write(`graphrun runner: running jobs from ${describeStorage(options)}${more}\n`);
  stopOnSignals(async () => {
    await service.close();
    clearInterval(alive);
  });
}

/** The message for a failed start; a lock held elsewhere says what to do instead. */
export function startFailure(err: unknown, command: 'serve' | 'runner'): string {
  if (!(err instanceof RunnerLockError)) return describeError(err);
  // The storage's wording names the library option; the CLI user needs the flag.
  const message = err.message.replace(/ Stop it first, or start this one with runJobs: false.*$/, '');
  return command === 'serve'
    ? `${message} Stop it first, or add --no-run-jobs to serve the API only beside it.`
    : `${message} Stop it first; beside it, run "graphrun serve --no-run-jobs" for the API.`;
}
