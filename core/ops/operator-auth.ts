// The operator's routes (/metrics, /ops/*): open unless the service was given
// an operatorToken, then only for `Authorization: Bearer <operatorToken>`.
// Account keys never open them: an account sees its own jobs, not the fleet.

import { sha256Hex } from '../../lib/sha256.ts';
import { bearerToken } from '../auth.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';

const digests = new WeakMap<ServiceContext, Promise<string>>();

export async function requireOperator(request: Request, ctx: ServiceContext): Promise<void> {
  const token = ctx.config.operatorToken;
  if (token === undefined) return;
  let expected = digests.get(ctx);
  if (expected === undefined) digests.set(ctx, (expected = sha256Hex(token)));
  const presented = bearerToken(request);
  // Compared as digests so the comparison's timing says nothing about the token.
  if (presented && (await sha256Hex(presented)) === (await expected)) return;
  throw new ApiError('unauthorized', 'This route needs the operator token: send "Authorization: Bearer <operator token>".', undefined, {
    'WWW-Authenticate': 'Bearer realm="graphrun-operator"',
  });
}

/**
 * The operator's changes (engine servers, a deployment's condition) always
 * need the token: without one configured they answer 403, since an open
 * route that changes where jobs run would hand the fleet to whoever reaches
 * the port. `what` names the change in the refusal.
 */
export async function requireOperatorToChange(request: Request, ctx: ServiceContext, what: string): Promise<void> {
  if (ctx.config.operatorToken === undefined) {
    throw new ApiError(
      'forbidden',
      `${what} needs an operator token: start the service with --operator-token (GRAPHRUN_OPERATOR_TOKEN, or the operatorToken option) and send "Authorization: Bearer <operator token>".`,
    );
  }
  await requireOperator(request, ctx);
}
