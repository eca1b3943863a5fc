// The few parts of Deno's server API the adapter uses, declared structurally
// so the project type-checks without Deno's type declarations.

export interface DenoServeOptions {
  hostname?: string;
  port?: number;
  signal?: AbortSignal;
  onListen?(addr: { hostname: string; port: number }): void;
  onError?(err: unknown): Response | Promise<Response>;
}

export interface DenoHttpServer {
  readonly addr: { hostname: string; port: number };
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}

/** The server side of an upgraded connection: a WHATWG WebSocket. */
export interface DenoWebSocket {
  binaryType: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: (() => void) | null;
  onmessage: ((event: { data: string | ArrayBuffer }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

export interface DenoGlobal {
  serve(options: DenoServeOptions, handler: (request: Request) => Response | Promise<Response>): DenoHttpServer;
  upgradeWebSocket(request: Request): { socket: DenoWebSocket; response: Response };
}

/** `Deno`, or an error saying this is not Deno. */
export function denoGlobal(): DenoGlobal {
  const deno = (globalThis as { Deno?: DenoGlobal }).Deno;
  if (!deno) throw new Error('adapters/deno needs the Deno runtime (globalThis.Deno is missing)');
  return deno;
}
