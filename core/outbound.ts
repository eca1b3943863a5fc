// The operator's policy for requests the service itself sends out (video key
// frames by URL, callback_url deliveries): the same switch and resolver the
// built-in engine's LoadImageFromURL follows. The guard is engine/local/net.
import type { UrlPolicy } from '../engine/local/net/url-guard.ts';
import type { ServiceContext } from './context.ts';

export function outboundPolicy(ctx: Pick<ServiceContext, 'options'>): UrlPolicy {
  return { allowPrivate: ctx.options?.allowPrivateUrls === true, resolveHost: ctx.options?.resolveHost };
}
