// The outbound guard's DNS lookup on Node: every address a name resolves to,
// so a public-looking name that points into the private network is refused
// (core and engine/local cannot resolve names with Web APIs alone).
import { lookup } from 'node:dns/promises';
import type { ResolveHost } from '../../lib/net/url-guard.ts';

export const resolveHostWithDns: ResolveHost = async (hostname) => {
  const name = hostname.replace(/^\[|\]$/g, '');
  return (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);
};
