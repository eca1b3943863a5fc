// Who is calling the cloud-compatible surface: `X-API-Key` (the contract's
// scheme), or `Authorization: Bearer` as v2 clients send it. Running
// workflows through this surface also needs an active subscription.
import type { AccountRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';

export async function cloudAccount(request: Request, ctx: ServiceContext): Promise<AccountRecord> {
  const key = request.headers.get('x-api-key');
  if (key !== null) return ctx.auth.authenticateKey(key, 'the X-API-Key header');
  if (request.headers.has('authorization')) return ctx.auth.authenticate(request);
  return ctx.auth.authenticateKey(null, 'the X-API-Key header');
}

/** 429 `subscription_inactive` when a subscription provider says the account's subscription lapsed. */
export async function requireActiveSubscription(ctx: ServiceContext, account: AccountRecord): Promise<void> {
  if (!ctx.subscriptions) return;
  if (!(await ctx.subscriptions.isActive(account.id))) {
    throw new ApiError('subscription_inactive', 'An active subscription is needed to run workflows.', undefined, {
      'Retry-After': '60',
    });
  }
}
