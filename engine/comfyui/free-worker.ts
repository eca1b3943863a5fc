// POST /free to an engine server: it unloads its models and frees its memory
// before its next prompt (the real server sets flags its prompt loop reads),
// so the pool forgets what it held there. Here rather than in the worker
// client, which is the job path's; this is an operator's call.
import { type Dispatcher, request } from 'undici';
import type { HttpDispatcher } from '../../lib/http-dispatcher.ts';

export async function freeWorker(url: string, dispatcher: HttpDispatcher | undefined, timeoutMs: number): Promise<void> {
  const res = await request(`${url}/free`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ unload_models: true, free_memory: true }),
    signal: AbortSignal.timeout(timeoutMs),
    ...(dispatcher ? { dispatcher: dispatcher as Dispatcher } : {}),
  });
  await res.body.text().catch(() => '');
  if (res.statusCode >= 300) throw new Error(`/free: ${url} answered ${res.statusCode}`);
}
