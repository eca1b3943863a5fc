// No server at all: the service is a `fetch` function over in-memory storage,
// handy in tests or inside another framework. Run: npx tsx examples/in-process.ts
import { type AssetView, createService } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';

const service = await createService({ storage: createMemoryStorage() });

const form = new FormData();
form.set('file', new Blob(['hello, graphrun']), 'hello.txt');
form.set('content_type', 'text/plain');
form.set('file_path', 'hello.txt');
const created = await service.fetch(new Request('http://local/api/v2/assets', { method: 'POST', body: form }));
const asset = (await created.json()) as AssetView;
console.log(created.status, asset.hash);

// The signed url needs no credentials; it is served by the same fetch.
const content = await service.fetch(new Request(asset.url));
console.log(await content.text());
await service.close();
