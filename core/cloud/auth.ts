// Who is calling the cloud-compatible surface: `X-API-Key` (the contract's
// scheme), or `Authorization: Bearer` as v2 clients send it; on a /ws
// upgrade, the `token` query parameter (the contract's way there) before
// either header. Running workflows through this surface also needs an
// active subscription.
import type { AccountRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';

export async function cloudAccount(request: Request, ctx: ServiceContext): Promise<AccountRecord> {
  const key = request.headers.get('x-api-key');
  if (key !== null) return ctx.auth.authenticateKey(key, 'the X-API-Key header');
  if (request.headers.has('authorization')) return ctx.auth.authenticate(request);
  return ctx.auth.authenticateKey(null, 'the X-API-Key header');
}

/**
 * The account of a /ws upgrade: its `token` query parameter when it has a
 * non-empty one, else the headers as on HTTP (clients that cannot set a
 * query send `X-API-Key` or `Authorization: Bearer` on the upgrade).
 */
export async function webSocketAccount(request: Request, url: URL, ctx: ServiceContext): Promise<AccountRecord> {
  const token = url.searchParams.get('token');
  if (token !== null && token.trim() !== '') return ctx.auth.authenticateKey(token, 'the token query parameter');
  if (request.headers.has('x-api-key') || request.headers.has('authorization')) return cloudAccount(request, ctx);
  return ctx.auth.authenticateKey(null, 'the token query parameter (or an X-API-Key or "Authorization: Bearer" header)');
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
