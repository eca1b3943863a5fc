// Public entry of the core: the service factory and the types adapters and
// storage implementations are written against.
export { createService, DEFAULT_MAX_UPLOAD_BYTES } from './service.ts';
export { ApiError, ERROR_STATUS, envelope, type ErrorCode } from './errors.ts';
export { apiKeyHash, createHasher, type HasherFactory, type StreamHasher } from './hash.ts';
export { consoleLogger, silentLogger } from './log.ts';
export type * from './types.ts';
export type { AssetView } from './assets/view.ts';
export type * from '../storage/types.ts';
