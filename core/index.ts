// Public entry of the core: the service factory (engine and providers
// required) and the types adapters, storage, engines and providers are
// written against. The package's main entry (index.ts) adds the defaults.

export type * from '../engine/types.ts';
export { createHasher, type HasherFactory, type StreamHasher } from '../lib/blake3.ts';
export type * from '../providers/types.ts';
export type * from '../storage/types.ts';
export { RunnerLockError } from '../storage/types.ts';
export type { AssetView } from './assets/view.ts';
export { DEFAULT_MAX_UPLOAD_BYTES } from './config.ts';
export type { CoreServiceOptions } from './context.ts';
export { type DeploymentState, DeploymentStorageError } from './deployments/condition.ts';
export { createDeploymentGateway, type DeploymentGatewayOptions, type GatewayDeployment } from './deployments/gateway.ts';
export { ApiError, ERROR_STATUS, type ErrorCode, envelope } from './errors.ts';
export { apiKeyHash } from './hash.ts';
export { consoleLogger, silentLogger } from './log.ts';
export { createService } from './service.ts';
export type * from './types.ts';
