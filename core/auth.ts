// v2 authentication: `Authorization: Bearer <key>`. Open by default (self-hosted);
// a static token or account API keys (looked up by SHA-256 hash) make it required.
// Every request resolves to an account, which owns everything it creates.

import { sha256Hex } from '../lib/sha256.ts';
import type { AccountRecord, AccountStore, MetadataStore } from '../storage/types.ts';
import { ApiError } from './errors.ts';
import { apiKeyHash } from './hash.ts';
import type { AccountOption } from './types.ts';

/** The account that owns everything on a deployment without account keys. */
export const LOCAL_ACCOUNT = 'local';

export interface Authenticator {
  /** v2: `Authorization: Bearer <key>`. */
  authenticate(request: Request): Promise<AccountRecord>;
  /**
   * A key presented some other way (the cloud surface's `X-API-Key`, the
   * WebSocket's `token` query parameter); null = none presented. `how` names
   * the way in the 401 message.
   */
  authenticateKey(key: string | null, how: string): Promise<AccountRecord>;
}

export function bearerToken(request: Request): string | null {
  const header = request.headers.get('authorization');
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : '';
}

/** Key digests whose account (or absence) is kept for reuse under the store's commit mark. */
const KEPT_KEYS = 1_000;

export async function createAuthenticator(
  metadata: AccountStore & Pick<MetadataStore, 'commitMark'>,
  opts: { token?: string; accounts?: AccountOption[]; now: () => number },
): Promise<Authenticator> {
  const local = await metadata.upsertAccount({ id: LOCAL_ACCOUNT });
  const keys: Array<{ account_id: string; key_hash: string }> = [];
  for (const account of opts.accounts ?? []) {
    await metadata.upsertAccount({ id: account.id, tier: account.tier });
    for (const key of account.apiKeys ?? []) keys.push({ account_id: account.id, key_hash: await apiKeyHash(key) });
    for (const hash of account.apiKeyHashes ?? []) keys.push({ account_id: account.id, key_hash: hash.toLowerCase() });
  }
  // The configuration is the whole truth: keys it no longer lists stop working.
  await metadata.replaceApiKeys(keys);
  // Compared as digests so the comparison's timing says nothing about the token.
  const tokenDigest = opts.token ? await sha256Hex(opts.token) : null;
  const required = tokenDigest !== null || (opts.accounts?.length ?? 0) > 0;
  const unauthorized = (message: string) => new ApiError('unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer realm="graphrun"' });

  // What a key's lookup found, with the store's commit mark taken before it:
  // while the mark stays put nothing was committed anywhere since (no key,
  // account or tier changed), so the lookup would find the same. Where the
  // store has no mark, every request looks its key up.
  const kept = new Map<string, { account: AccountRecord | null; mark: string }>();
  async function lookUp(digest: string): Promise<AccountRecord | null> {
    const mark = metadata.commitMark?.();
    const hit = kept.get(digest);
    if (hit !== undefined && mark !== undefined && hit.mark === mark) return hit.account;
    const account = await metadata.findAccountByKeyHash(`sha256:${digest}`);
    if (mark !== undefined) {
      kept.delete(digest);
      // Bounded, oldest first: keys made up by a caller cost a lookup each, not memory.
      if (kept.size >= KEPT_KEYS) kept.delete(kept.keys().next().value!);
      kept.set(digest, { account, mark });
    }
    return account;
  }

  async function byKey(presented: string): Promise<AccountRecord> {
    const digest = await sha256Hex(presented);
    if (digest === tokenDigest) return local;
    const account = await lookUp(digest);
    if (account) return account;
    if (required) throw unauthorized('The API key is not valid.');
    // Open deployments ignore keys they do not know, as clients often send one anyway.
    return local;
  }

  return {
    async authenticate(request) {
      const presented = bearerToken(request);
      if (presented === null || presented === '') {
        if (presented === '' && required) throw unauthorized('The Authorization header must be "Bearer <API key>".');
        if (required) throw unauthorized('An API key is required: send "Authorization: Bearer <API key>".');
        return local;
      }
      return byKey(presented);
    },
    async authenticateKey(key, how) {
      if (key === null || key.trim() === '') {
        if (required) throw unauthorized(`An API key is required: send it as ${how}.`);
        return local;
      }
      return byKey(key.trim());
    },
  };
}
