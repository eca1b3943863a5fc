// The few parts of Bun's server API the adapter uses, declared structurally so
// the project type-checks without Bun's type package.

export interface BunServerWebSocket<D> {
  readonly data: D;
  readonly readyState: number;
  send(data: string | Uint8Array): number;
  close(code?: number, reason?: string): void;
  getBufferedAmount(): number;
}

export interface BunServer {
  readonly port: number;
  upgrade<D>(request: Request, options: { data: D }): boolean;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}

export interface BunWebSocketHandler<D> {
  open(ws: BunServerWebSocket<D>): void;
  message(ws: BunServerWebSocket<D>, message: string | Uint8Array): void;
  close(ws: BunServerWebSocket<D>, code: number, reason: string): void;
  maxPayloadLength?: number;
}

export interface BunServeOptions<D> {
  hostname?: string;
  port?: number;
  idleTimeout?: number;
  maxRequestBodySize?: number;
  fetch(request: Request, server: BunServer): Promise<Response | undefined> | Response | undefined;
  error?(err: Error): Response | Promise<Response>;
  websocket: BunWebSocketHandler<D>;
}

export interface BunGlobal {
  serve<D>(options: BunServeOptions<D>): BunServer;
}

/** `Bun`, or an error saying this is not Bun. */
export function bunGlobal(): BunGlobal {
  const bun = (globalThis as { Bun?: BunGlobal }).Bun;
  if (!bun) throw new Error('adapters/bun needs the Bun runtime (globalThis.Bun is missing)');
  return bun;
}
