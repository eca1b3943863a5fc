// Public entry of the core: the service factory (engine and providers
// required) and the types adapters, storage, engines and providers are
// written against. The package's main entry (index.ts) adds the defaults.
export { createService } from './service.ts';
export type { CoreServiceOptions } from './context.ts';
export { DEFAULT_MAX_UPLOAD_BYTES } from './config.ts';
export { ApiError, ERROR_STATUS, envelope, type ErrorCode } from './errors.ts';
export { apiKeyHash } from './hash.ts';
export { createHasher, type HasherFactory, type StreamHasher } from '../lib/blake3.ts';
export { consoleLogger, silentLogger } from './log.ts';
export type * from './types.ts';
export type { AssetView } from './assets/view.ts';
export type * from '../storage/types.ts';
export type * from '../engine/types.ts';
export type * from '../providers/types.ts';
