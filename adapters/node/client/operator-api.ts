// The client of the operator's routes (`graphrun servers`, `graphrun
// deployments`): the operator token (--operator-token, env
// GRAPHRUN_OPERATOR_TOKEN, the variable `serve` reads) in place of the
// account token, and, for one deployment of a deployment gateway, its path
// prefix: /deployment/<id> under --url. A gateway with another prefix, or
// none, is reached by giving the deployment's own URL as --url instead.
import { DEPLOYMENT_ID } from '../../../core/deployments/condition.ts';
import { type Api, createApi } from './api.ts';
import { type ConnectionFlags, clientConfig } from './config.ts';
import { CliUsageError } from './errors.ts';

export interface OperatorFlags {
  url?: string;
  operatorToken?: string;
  json?: boolean;
}

type Env = Record<string, string | undefined>;

/** A deployment id as the server takes it, or a usage error before any request. */
export function deploymentIdOf(id: string, from: string): string {
  if (!DEPLOYMENT_ID.test(id)) {
    throw new CliUsageError(`${from} must be one lower-case DNS label (a-z, 0-9 and inner hyphens), got "${id}".`);
  }
  return id;
}

/** The API at --url, or at deployment `deployment` under it; 'default' is the one at --url itself. */
export function operatorApi(flags: OperatorFlags, env: Env, deployment?: string): Api {
  if (flags.operatorToken === '') throw new CliUsageError('--operator-token must not be empty.');
  // The operator token takes the place of the account token; an empty variable counts as unset.
  const connection: ConnectionFlags = { url: flags.url, token: flags.operatorToken };
  const config = clientConfig(connection, { ...env, GRAPHRUN_TOKEN: env.GRAPHRUN_OPERATOR_TOKEN });
  if (deployment === undefined || deployment === 'default') return createApi(config);
  return createApi({ ...config, baseUrl: `${config.baseUrl}/deployment/${deployment}` });
}
