// What the service lends partner nodes of an in-process engine: the job's
// account and key, its credits, and the generation providers the /proxy
// endpoints use, so a node generates exactly what the endpoint would.
import type { PartnerServices } from '../../engine/types.ts';
import type { ServiceBase } from '../context.ts';
import { chargeCredits } from '../jobs/credits.ts';

export function partnerServices(
  ctx: Pick<ServiceBase, 'credits' | 'providers'>,
  accountId: string,
  extra: Record<string, unknown> | undefined,
): PartnerServices {
  const key = extra?.api_key_platform_org;
  return {
    account_id: accountId,
    api_key: typeof key === 'string' ? key : undefined,
    charge: (amount, what) => chargeCredits(ctx.credits, accountId, amount, what),
    providers: ctx.providers,
  };
}
