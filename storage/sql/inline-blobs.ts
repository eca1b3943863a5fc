// Small blobs kept inside the SQLite database, in front of another BlobStore
// that keeps the rest. A job's image of a few hundred bytes costs the file
// store a durable write, a link and a directory sync (two journal commits and
// five trips through the thread pool); as a row it is part of a WAL commit.
// It is exactly as durable as the rows that name it: it sits in the same
// write-ahead log, committed before the asset row that refers to it, so no
// crash keeps the asset and loses its bytes (synchronous=NORMAL: a crash of
// the process loses neither; a power loss may take back both).
// A blob goes inline when all of it has come without passing `maxBytes`; the
// first write past that sends what was buffered, and the rest, to the other
// store. A key holds one content, so one size and one place: only a store
// that held blobs before inlining (or under another limit) has a small key
// outside (a later commit of it adds a row beside its file, and says it
// created nothing; both go when the blob does).
import { type Kysely, sql } from 'kysely';
import { concatBytes } from '../../lib/bytes.ts';
import { checkBlobKey } from '../blob-key.ts';
import { checkByteRange } from '../byte-range.ts';
import { copyBytes } from '../copy-bytes.ts';
import type { BlobStore, BlobWriter } from '../types.ts';
import { type DirectReader, queryTemplate, statementTemplate } from './query-template.ts';
import type { Database } from './schema.ts';

export interface InlineBlobsOptions {
  /** Blobs of up to this many bytes are kept in the database; 0: none more (those there stay readable). */
  maxBytes: number;
  /** Reads a SELECT's rows at once when the connection is free (else undefined). */
  readNow: DirectReader;
}

/** Inline blobs listed per query. */
const LIST_PAGE = 1000;

/** Throws when the limit is no size, or `outside` cannot have inline blobs in front of it. */
export function checkInlineBlobs(maxBytes: number, outside: BlobStore): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
    throw new TypeError(`inlineBlobBytes must be a whole number of bytes (0 for none), got ${maxBytes}`);
  // A download redirect signs the key in the outside store, where an inline blob is not.
  if (maxBytes > 0 && outside.signedUrl)
    throw new TypeError('inlineBlobBytes needs a blob store that does not sign URLs (an S3 store signs its own keys only); set it to 0');
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      if (bytes.length > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}

/**
 * `outside` with the database's inline blobs in front of it. The table is
 * made at the first open (the database's own table, not a shared migration:
 * a PostgreSQL deployment keeps all its blobs outside), and read whatever the
 * limit, so that instances sharing the database see each other's inline
 * blobs, and those of a limit since set to 0 stay readable. A store that
 * signs URLs gets no inline blobs: it is `outside` itself, over a database
 * that holds none.
 */
export async function openInlineBlobs(db: Kysely<Database>, outside: BlobStore, options: InlineBlobsOptions): Promise<BlobStore> {
  checkInlineBlobs(options.maxBytes, outside);
  if (outside.signedUrl) {
    const table = await sql`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'inline_blobs'`.execute(db);
    if (table.rows.length > 0 && (await sql`SELECT 1 FROM inline_blobs LIMIT 1`.execute(db)).rows.length > 0)
      throw new TypeError('the database holds inline blobs, which a blob store that signs URLs cannot serve: keep the blob store it had');
    return outside;
  }
  // WITHOUT ROWID: one b-tree, keyed by the blob's key, where a rowid table would add its key's index as a
  // second b-tree to write per blob. A row past a page's share goes to overflow pages in either kind.
  await sql`CREATE TABLE IF NOT EXISTS inline_blobs (key TEXT PRIMARY KEY, bytes BLOB NOT NULL, modified_at INTEGER NOT NULL) WITHOUT ROWID`.execute(
    db,
  );
  return inlineBlobs(db, outside, options);
}

function inlineBlobs(db: Kysely<Database>, outside: BlobStore, { maxBytes, readNow }: InlineBlobsOptions): BlobStore {
  // Compiled once; reads run at once while the connection is free (readNow), else through the queue.
  const selectBytes = queryTemplate(db, 1, (key: string) => db.selectFrom('inline_blobs').select('bytes').where('key', '=', key), readNow);
  const selectInlined = queryTemplate(db, 1, (key: string) => db.selectFrom('inline_blobs').select('key').where('key', '=', key), readNow);
  /** Whether the metadata has a row of the blob (any asset over it has). */
  const selectRecorded = queryTemplate(db, 1, (key: string) => db.selectFrom('blobs').select('key').where('key', '=', key), readNow);
  const insert = statementTemplate(3, (key: string, bytes: Uint8Array, at: number) =>
    db
      .insertInto('inline_blobs')
      .values({ key, bytes, modified_at: at })
      .onConflict((oc) => oc.column('key').doNothing()),
  );
  const bytesOf = async (key: string) => (await selectBytes(key))[0]?.bytes ?? null;
  const inlined = async (key: string) => (await selectInlined(key)).length > 0;
  const recorded = async (key: string) => (await selectRecorded(key)).length > 0;

  const store: BlobStore = {
    ...(outside.location !== undefined && { location: outside.location }),
    async begin(): Promise<BlobWriter> {
      let buffered: Uint8Array[] = [];
      let size = 0;
      /** The outside store's writer, once the blob has passed the limit. */
      let spilled: Promise<BlobWriter> | undefined;
      let state: 'open' | 'committing' | 'done' = 'open';
      const spill = () => {
        const parts = buffered;
        buffered = [];
        // Set before any await: a write that comes meanwhile queues behind these.
        spilled = outside.begin().then(async (writer) => {
          try {
            for (const part of parts) await writer.write(part);
          } catch (err) {
            // Not handed out: abort can only reach it from here.
            await writer.abort().catch(() => {});
            throw err;
          }
          return writer;
        });
        return spilled;
      };
      return {
        async write(chunk) {
          if (state !== 'open') throw new Error('blob writer is closed');
          if (!spilled && size + chunk.length <= maxBytes) {
            buffered.push(copyBytes(chunk));
            size += chunk.length;
            return;
          }
          await (await (spilled ?? spill())).write(chunk);
        },

        async commit(key) {
          checkBlobKey(key);
          if (state !== 'open') throw new Error('blob writer is closed');
          state = 'committing';
          if (spilled || maxBytes === 0) {
            const writer = await (spilled ?? spill());
            // Held inline, the key is taken (by the same bytes, unless a caller reuses a key for others).
            if (await inlined(key)) {
              await writer.abort();
              state = 'done';
              return false;
            }
            const created = await writer.commit(key);
            state = 'done';
            return created;
          }
          // Most blobs come in one chunk, already copied.
          const bytes = buffered.length === 1 ? buffered[0] : concatBytes(buffered);
          buffered = [];
          const inserted = await insert(db, key, bytes, Date.now());
          state = 'done';
          if ((inserted.numAffectedRows ?? 0n) === 0n) return false;
          // A blob row of the key, where it had no inline row: its bytes are outside, stored before inlining
          // (or under a smaller limit), and assets rely on them. This call then created nothing, and must not
          // say so: a caller deletes what it created when its own write after fails.
          return !(await recorded(key));
        },

        async abort() {
          // A commit that failed midway leaves 'committing': abort still lets go of the outside writer.
          if (state === 'done') return;
          state = 'done';
          buffered = [];
          await (await spilled?.catch(() => undefined))?.abort();
        },
      };
    },

    async get(key, range) {
      checkBlobKey(key);
      if (range) checkByteRange(range);
      const bytes = await bytesOf(key);
      if (!bytes) return outside.get(key, range);
      return streamOf(range ? bytes.subarray(range.start, range.end + 1) : bytes);
    },

    async has(key) {
      checkBlobKey(key);
      return (await inlined(key)) || outside.has(key);
    },

    async delete(key) {
      checkBlobKey(key);
      await db.deleteFrom('inline_blobs').where('key', '=', key).execute();
      await outside.delete(key);
    },

    ...(outside.close && { close: () => outside.close!() }),
  };
  // Inline blobs are listed even when the outside store cannot list its own: a crash between a blob's
  // commit and its asset's leaves a row that only the sweep of listed blobs removes.
  const listOutside = outside.list?.bind(outside);
  store.list = async function* () {
    // By pages in key order, so a large table is never all in memory, and the connection is free between pages.
    for (let after = ''; ; ) {
      const rows = await db
        .selectFrom('inline_blobs')
        .select(['key', 'modified_at'])
        .where('key', '>', after)
        .orderBy('key')
        .limit(LIST_PAGE)
        .execute();
      for (const row of rows) yield { key: row.key, modified_at: Number(row.modified_at) };
      if (rows.length < LIST_PAGE) break;
      after = rows[rows.length - 1]!.key;
    }
    if (listOutside) yield* listOutside();
  };
  return store;
}
