// GET /system_stats (public, as in the cloud contract) and GET /features
// (optional auth). The core runs on Web APIs only, so what the reference
// reads from the OS and Python is either what `navigator` offers or a
// constant: python/pytorch `n/a`, `argv` empty, RAM 0 when unknown, and no
// devices (the engine is not a GPU this process can describe).
import type { ServiceContext } from '../context.ts';

/** The service's version (package.json), as comfyui_version and cloud_version report it. */
export const SERVICE_VERSION = '0.1.0';

interface NavigatorLike {
  platform?: string;
  userAgent?: string;
  deviceMemory?: number;
}

/** The flags the server announces (also answered to a WebSocket `feature_flags` message). */
export function serverFeatures(ctx: ServiceContext): Record<string, unknown> {
  return { supports_preview_metadata: true, max_upload_size: ctx.config.maxUploadBytes };
}

export async function getSystemStats(_request: Request, _ctx: ServiceContext): Promise<Response> {
  const nav = (globalThis as { navigator?: NavigatorLike }).navigator;
  const ram = typeof nav?.deviceMemory === 'number' ? nav.deviceMemory * 2 ** 30 : 0;
  return Response.json({
    system: {
      os: nav?.platform || 'unknown',
      python_version: 'n/a',
      embedded_python: false,
      comfyui_version: SERVICE_VERSION,
      cloud_version: SERVICE_VERSION,
      pytorch_version: 'n/a',
      argv: [],
      ram_total: ram,
      ram_free: 0,
      runtime: nav?.userAgent || 'unknown',
    },
    devices: [],
  });
}

export async function getFeatures(_request: Request, ctx: ServiceContext): Promise<Response> {
  return Response.json(serverFeatures(ctx));
}
