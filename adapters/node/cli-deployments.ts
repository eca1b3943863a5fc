// `graphrun serve|runner --deployments <file>`: the deployment 'default' (the
// flags, on the main storage, exactly as without the file) and every
// deployment the file lists, each a whole service with its own engine and
// its own storage, derived from the main storage's flags, since a storage
// belongs to one deployment (its scheduler would run another's jobs). One
// deployment gateway holds them: `serve` answers through it, `runner` only
// runs their jobs, and closing it closes them all.
import { join } from 'node:path';
import { createDeploymentGateway, type GatewayDeployment, RunnerLockError, type Service } from '../../index.ts';
import type { DeploymentCliOption, DeploymentsCliOptions, RunnerCliOptions } from './cli-options.ts';
import { type CliHttp, createCliService } from './cli-service.ts';
import { describeStorage, openCliStorage } from './cli-storage.ts';
import type { StorageCliOptions } from './cli-storage-options.ts';

/**
 * Deployment `id`'s storage beside the main one: SQLite and blob files in
 * <data>/deployments/<id>; on PostgreSQL the same database, schema
 * deployment_<id> (- as _, which ids never hold, so no two ids meet); a
 * --blobs directory or bucket prefix gets deployments/<id> under it. The
 * main blob stores never see those as theirs: the directory store lists only
 * its two-letter fan-out folders, the bucket store one level under its prefix.
 */
export function deploymentStorage(main: StorageCliOptions, id: string): StorageCliOptions {
  const blobs: StorageCliOptions['blobs'] =
    main.blobs === undefined
      ? undefined
      : main.blobs.kind === 'dir'
        ? { kind: 'dir', dir: join(main.blobs.dir, 'deployments', id) }
        : { ...main.blobs, prefix: `${main.blobs.prefix}deployments/${id}/` };
  const schema = main.database === undefined ? undefined : `deployment_${id.replaceAll('-', '_')}`;
  return { data: join(main.data, 'deployments', id), database: main.database, blobs, ...(schema && { schema }) };
}

function engineText({ workers, threads }: Pick<DeploymentCliOption, 'workers' | 'threads'>, runJobs: boolean): string {
  if (!runJobs) return 'API only (a "graphrun runner" runs its jobs)';
  if (workers.length > 0) return `jobs on ${workers.length} worker(s) ${workers.join(', ')}`;
  return `jobs in process on ${threads ?? 'one per core'} thread(s)`;
}

/** Where serve's clients reach a deployment: its path and its hosts. */
function addressText(file: DeploymentsCliOptions, id: string, staging: boolean): string {
  const places = file.pathPrefix === false ? [] : [`${file.pathPrefix ?? '/deployment'}/${id}/`];
  for (const domain of staging ? file.stagingDomains : file.baseDomains) places.push(`${id}.${domain}`);
  return (id === 'default' ? ['/ (any address naming no deployment)', ...places] : places).join(', ');
}

/** Every deployment started, behind one gateway; on a failure, those already started are closed. */
export async function startCliDeployments(options: RunnerCliOptions & { deployments: DeploymentsCliOptions }, http?: CliHttp): Promise<Service> {
  const file = options.deployments;
  const runJobs = http?.runJobs ?? true;
  const say = (id: string, staging: boolean, engine: string, storage: StorageCliOptions) =>
    process.stderr.write(
      `graphrun: deployment ${id}${staging ? ' (staging)' : ''}${http ? ` at ${addressText(file, id, staging)}` : ''}: ${engine}; ${describeStorage(storage)}\n`,
    );
  const started: GatewayDeployment[] = [];
  try {
    const main = await createCliService(await openCliStorage(options), options, http);
    started.push({ service: main });
    say('default', false, engineText(options, runJobs), options);
    for (const d of file.deployments) {
      const storage = deploymentStorage(options, d.id);
      // Its own engine: the file's workers or threads in place of the flags'; the rest (tokens, webhooks, policy) as the default's.
      const service = await openCliStorage(storage)
        .then((opened) => createCliService(opened, { ...options, ...storage, workers: d.workers, threads: d.threads, pool: d.pool }, http, d.id))
        .catch((err: unknown) => {
          // The lock's message names the storage and what to do; any other failure gets the deployment's name.
          throw err instanceof RunnerLockError ? err : new Error(`deployment "${d.id}"`, { cause: err });
        });
      started.push({ service, staging: d.staging });
      say(d.id, d.staging, engineText(d, runJobs), storage);
    }
    return createDeploymentGateway({
      deployments: started,
      baseDomains: file.baseDomains,
      stagingDomains: file.stagingDomains,
      pathPrefix: file.pathPrefix,
    });
  } catch (err) {
    await Promise.all(started.map(({ service }) => service.close().catch(() => {})));
    throw err;
  }
}
