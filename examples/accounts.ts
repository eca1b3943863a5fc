// Multi-tenant: API keys resolve to accounts (stored only as SHA-256 hashes);
// each account sees only its own assets. Run: npx tsx examples/accounts.ts
import { type AssetView, createService } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';

const service = await createService({
  storage: createMemoryStorage(),
  accounts: [
    { id: 'alice', tier: 'pro', apiKeys: ['key-alice'] },
    { id: 'bob', apiKeys: ['key-bob'] },
  ],
});
const as = (key: string) => ({ authorization: `Bearer ${key}` });

const form = new FormData();
form.set('file', new Blob(['alice only']), 'a.txt');
form.set('content_type', 'text/plain');
form.set('file_path', 'a.txt');
const created = await service.fetch(new Request('http://local/api/v2/assets', { method: 'POST', body: form, headers: as('key-alice') }));
const asset = (await created.json()) as AssetView;

const mine = await service.fetch(new Request(`http://local/api/v2/assets/${asset.id}`, { headers: as('key-alice') }));
const theirs = await service.fetch(new Request(`http://local/api/v2/assets/${asset.id}`, { headers: as('key-bob') }));
const nobody = await service.fetch(new Request(`http://local/api/v2/assets/${asset.id}`));
console.log({ alice: mine.status, bob: theirs.status, anonymous: nobody.status }); // 200, 404, 401
await service.close();
