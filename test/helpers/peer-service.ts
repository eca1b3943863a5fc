// A second instance of one deployment for the HTTP tests: a service over the
// same metadata as a harness (its SQLite file, or a database the test opens)
// and the same blob directory, reached the way the harness is (in process, or
// through a real server of its own). Also a GET that names its own Host, which
// a fetch() through undici cannot send.
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { serve } from '../../adapters/node/server.ts';
import { createService, type DefaultServiceOptions, silentLogger } from '../../index.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../../storage/sql/sqlite.ts';
import type { Harness, OpenStorage } from './harness.ts';

/** The harness's own SQLite file (test/helpers/harness.ts names it so). */
const sameSqlite: OpenStorage = (blobs, dir) => createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs });

/** Another service on `of`'s storage; close it before `of` (which removes the directory). */
export async function startPeer(of: Harness, options: Partial<DefaultServiceOptions> = {}, openStorage = sameSqlite): Promise<Harness> {
  const blobs = await createFsBlobStore({ dir: join(of.dir, 'blobs') });
  const storage = await openStorage(blobs, of.dir);
  const service = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, ...options });
  let base = 'http://peer.test';
  let stop = async () => {};
  if (of.mode === 'node-server') {
    const server = await serve(service, { host: '127.0.0.1', port: 0 });
    base = server.url;
    stop = () => server.close();
  }
  return {
    ...of,
    service,
    base,
    fetch(pathOrUrl, init) {
      const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : base + pathOrUrl;
      if (of.mode === 'in-process') return service.fetch(new Request(url, { ...init, duplex: 'half' } as RequestInit));
      return fetch(url, { ...init, duplex: 'half' } as RequestInit);
    },
    async close() {
      await stop();
      await service.close();
    },
  };
}

/** GET `url` from the server it names, sending `host` as the Host header. */
export function getWithHost(url: string, host: string, headers: Record<string, string> = {}): Promise<Response> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, headers: { ...headers, host } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === 'string') responseHeaders.set(name, value);
          }
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers: responseHeaders }));
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
