// Who is calling a generation endpoint, and paying for it. Both /proxy
// surfaces resolve the caller like v2 (`Authorization: Bearer <token>`; an open
// deployment answers for the `local` account) and charge through the
// operator's credits provider. They throw ApiError; each surface turns it
// into its own error body.
import type { AccountRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { chargeCredits as charge } from '../jobs/credits.ts';

/** The calling account; throws ApiError('unauthorized') for a missing or unknown key where keys are required. */
export async function proxyAccount(request: Request, ctx: Pick<ServiceContext, 'auth'>): Promise<AccountRecord> {
  // The contract also lists an API-key scheme: a bare X-API-Key is honoured when no Authorization is sent.
  if (!request.headers.has('authorization') && request.headers.has('x-api-key')) {
    return ctx.auth.authenticateKey(request.headers.get('x-api-key'), 'Authorization: Bearer <token>');
  }
  return ctx.auth.authenticate(request);
}

/** Charges `amount` credits for `what`; throws ApiError('insufficient_credits') when the provider refuses. */
export async function chargeCredits(ctx: Pick<ServiceContext, 'credits'>, accountId: string, amount: number, what: string): Promise<void> {
  if (!(await charge(ctx.credits, accountId, amount, what))) {
    throw new ApiError('insufficient_credits', `The account has not enough credits for ${what} (${amount} needed).`);
  }
}
