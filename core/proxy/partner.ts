// What the service lends partner nodes of an in-process engine: the job's
// account and key, its credits, and the generation providers the /proxy
// endpoints use, so a node generates exactly what the endpoint would.
import type { PartnerServices } from '../../engine/types.ts';
import type { ServiceContext } from '../context.ts';
import { chargeCredits } from '../jobs/credits.ts';
import { musicProviderOf } from './music/provider.ts';
import { videoProviderOf } from './video/provider.ts';

/** Provider lookups by kind; each surface adds its own. */
const PROVIDERS: Record<string, (ctx: ServiceContext) => unknown> = {
  music: musicProviderOf,
  video: videoProviderOf,
};

export function partnerServices(ctx: ServiceContext, accountId: string, extra: Record<string, unknown> | undefined): PartnerServices {
  const key = extra?.api_key_platform_org;
  return {
    account_id: accountId,
    api_key: typeof key === 'string' ? key : undefined,
    charge: (amount, what) => chargeCredits(ctx.credits, accountId, amount, what),
    provider: (kind) => (Object.hasOwn(PROVIDERS, kind) ? PROVIDERS[kind](ctx) : undefined),
  };
}
