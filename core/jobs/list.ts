// GET /api/v2/jobs, an addition to the contract: the caller's jobs, newest
// first, each the Job GET /api/v2/jobs/{id} answers, a page at a time:
// `{jobs, next_cursor}`. `status` filters (one or several, comma-separated
// or repeated), `limit` is 1..100 (default 20), `cursor` is the previous
// page's `next_cursor`, opaque to clients; null means no more pages.
//
// Paged by seq (keyset), not by offset, so jobs submitted between two pages
// neither shift nor repeat what follows. Rows are read without workflows
// (JobSummary), and each page reads its jobs' outputs and queue positions only.
// A job past its retention answers 404 on GET, so it is left out here too,
// even before the sweep marks it expired: such a page may be short while
// next_cursor still points further back.
import { fromBase64, toBase64 } from '../../lib/base64.ts';
import type { ServiceContext } from '../context.ts';
import { invalid } from '../errors.ts';
import { jsonResponse } from '../http/request-options.ts';
import { JOB_STATUSES } from './state-machine.ts';
import { isRetained, jobView } from './view.ts';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
/** Expired jobs answer 404 everywhere: no listing shows them. */
const LISTED = JOB_STATUSES.filter((s) => s !== 'expired');
const NO_STORE = { 'Cache-Control': 'no-store' };

/** The `status` values asked for, or every listed status when none is. */
function statusFilter(url: URL): string[] {
  const wanted = url.searchParams
    .getAll('status')
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (wanted.length === 0) return [...LISTED];
  for (const s of wanted) {
    if (!(JOB_STATUSES as readonly string[]).includes(s)) {
      throw invalid(`status: "${s}" is not one of ${JOB_STATUSES.join(', ')}`, 'status', 'not allowed', { allowed: [...JOB_STATUSES] });
    }
  }
  return [...new Set(wanted)].filter((s) => s !== 'expired');
}

function limitOf(url: URL): number {
  const raw = url.searchParams.get('limit');
  if (raw === null || raw.trim() === '') return DEFAULT_LIMIT;
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_LIMIT) {
    throw invalid(`limit: must be a whole number from 1 to ${MAX_LIMIT}`, 'limit', 'out of range');
  }
  return n;
}

// The cursor is the seq the next page starts below, wrapped so that clients
// treat it as a token rather than a number to compute with.
const CURSOR_PREFIX = 'v1:';

function encodeCursor(seq: number): string {
  return toBase64(new TextEncoder().encode(`${CURSOR_PREFIX}${seq}`))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The seq a cursor stands for; 422 for one this service did not hand out. */
function cursorOf(url: URL): number | undefined {
  const raw = url.searchParams.get('cursor');
  if (raw === null || raw === '') return undefined;
  let text = '';
  try {
    if (/^[A-Za-z0-9_-]{1,64}$/.test(raw)) text = new TextDecoder().decode(fromBase64(raw.replace(/-/g, '+').replace(/_/g, '/')));
  } catch {
    // not base64: refused below
  }
  const seq = text.startsWith(CURSOR_PREFIX) && /^\d+$/.test(text.slice(CURSOR_PREFIX.length)) ? Number(text.slice(CURSOR_PREFIX.length)) : NaN;
  if (!Number.isSafeInteger(seq)) throw invalid('cursor: not a cursor this service handed out; pass next_cursor as given', 'cursor', 'malformed');
  return seq;
}

export async function listJobs(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const url = new URL(request.url);
  const statuses = statusFilter(url);
  const limit = limitOf(url);
  const before = cursorOf(url);
  // One more than the page: whether another page follows, without counting.
  const rows = await ctx.metadata.listAccountJobs(account.id, { statuses, limit: limit + 1, before_seq: before });
  const page = rows.slice(0, limit);
  const now = ctx.now();
  const jobs = await Promise.all(page.filter((job) => isRetained(job, now)).map((job) => jobView(ctx, request, job)));
  const next_cursor = rows.length > limit ? encodeCursor(page[page.length - 1].seq) : null;
  return jsonResponse(request, { jobs, next_cursor }, { headers: NO_STORE });
}
