// What every runtime's conformance server serves: the service under test as
// the deployment 'default' (today's URLs), and beside it the deployment
// 'sdxl' on a storage of its own under `dir`, both behind one deployment
// gateway, so the suite reaches the second at /deployment/sdxl/... on every
// runtime. Only 'sdxl' has an operator token (the suite's main block reads
// /metrics of 'default' without one).
import { join } from 'node:path';
import { createDeploymentGateway, createService, type Service, type Storage, silentLogger } from '../../index.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import type { BlobStore } from '../../storage/types.ts';

export const SDXL_OPERATOR_TOKEN = 'runtime-sdxl-operator-token';

export async function withSdxl(
  service: Service,
  dir: string,
  storage: (filename: string, blobs: BlobStore) => Promise<Storage>,
  token?: string,
): Promise<Service> {
  const place = join(dir, 'deployments', 'sdxl');
  // The blob store makes its directory (and so the deployment's) before the database file goes there.
  const blobs = await createFsBlobStore({ dir: join(place, 'blobs') });
  const sdxl = await createService({
    storage: await storage(join(place, 'graphrun.db'), blobs),
    deploymentId: 'sdxl',
    logger: silentLogger,
    sweepIntervalMs: 0,
    token,
    operatorToken: SDXL_OPERATOR_TOKEN,
  });
  return createDeploymentGateway({ deployments: [{ service }, { service: sdxl }] });
}
