// A real webhook receiver for tests: an HTTP server on 127.0.0.1 that records
// every POST (headers, raw body, when), answers `status(n)` for the n-th one
// (default 204), verifies Standard Webhooks signatures with the
// specification's own library, and lets a test wait for the n-th request.
// It can start on a port chosen earlier (a receiver that "comes back").
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface WebhookRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as sent: what the signature covers. */
  body: string;
  json: any;
  at: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: WebhookRequest[];
  /** Resolves with the first `n` requests once they arrived; rejects after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<WebhookRequest[]>;
  close(): Promise<void>;
}

/** A fresh `whsec_` secret of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;
}

/** The payload of a request, after `new Webhook(secret).verify(body, headers)`; throws when the signature does not hold. */
export function verified(secret: string, request: WebhookRequest): any {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
  return new Webhook(secret).verify(request.body, headers);
}

export async function startWebhookReceiver(
  options: { status?: (n: number, request: WebhookRequest) => number; port?: number } = {},
): Promise<WebhookReceiver> {
  const received: WebhookRequest[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: any;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const request = { path: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
      received.push(request);
      res.writeHead(options.status?.(received.length, request) ?? 204).end();
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    waitFor(n, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < n) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(received.slice(0, n));
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`only ${received.length} of ${n} webhook requests arrived`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
