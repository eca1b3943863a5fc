// Child process of bench/upload.ts: the baseline an upload is measured
// against. A bare node:http server that streams each request body into a new
// file in the directory given as argv[2] and fsyncs it before answering: what
// storing the bytes costs with no parsing, hashing or bookkeeping. Speaks the
// same IPC as upload-server.ts and samples its own RSS the same way (upload-child.ts).
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { serveParent } from './upload-child.ts';

const dir = process.argv[2];
if (dir === undefined || !process.send) throw new Error('run by bench/upload.ts: fork with IPC and a data directory');

let count = 0;
const server = createServer(async (req, res) => {
  const path = join(dir, `bare-${process.pid}-${count++}`);
  try {
    // flush: the file is fsynced before it closes, and pipeline resolves only after the close.
    await pipeline(req, createWriteStream(path, { flags: 'wx', flush: true }));
    res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
  } catch (err) {
    res.writeHead(500).end(String(err));
  }
  // Gone after the answer, as the service's temp files are: the bench's disk stays bounded.
  await unlink(path).catch(() => {});
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

serveParent(url, async () => void server.close());
