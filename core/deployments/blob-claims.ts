// Which deployment uses which blob store place in this process. A
// deployment's orphan sweep removes every object of its blob store that its
// own rows do not name, so two deployments on one directory or bucket prefix
// would each delete the other's blobs: the second to start is refused. Only
// within a process (the guard on the metadata store, condition.ts, holds
// across processes; the CLI gives every deployment a place of its own).
import type { BlobStore } from '../../storage/types.ts';
import { DeploymentStorageError } from './condition.ts';

const claims = new Map<string, { id: string; holders: number }>();

/** Claims the store's place for deployment `id`; the returned function lets go of it (at close). */
export function claimBlobPlace(blobs: BlobStore, id: string): () => void {
  const place = blobs.location;
  if (place === undefined) return () => {};
  const claim = claims.get(place);
  if (claim !== undefined && claim.id !== id) {
    throw new DeploymentStorageError(
      `The blob store at ${place} is the deployment "${claim.id}"'s, not "${id}"'s: every deployment needs its own (each removes the blobs its own records do not name).`,
    );
  }
  // Instances of one deployment may share it (a restart, several services on one storage in tests).
  if (claim === undefined) claims.set(place, { id, holders: 1 });
  else claim.holders++;
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    const c = claims.get(place);
    if (c !== undefined && --c.holders === 0) claims.delete(place);
  };
}
