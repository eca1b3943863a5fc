// Which services createService built. Their handlers read a request's
// method, url, headers, signal and body and never copy it
// (`new Request(request)`), so an adapter may hand them a Request whose
// internals are built only on need (adapters/node/light-request.ts); any
// other object with a `fetch` (a wrapper, a test's fake) gets a plain one.
import type { Service } from './types.ts';

const built = new WeakSet<Service>();

export function markOwnService<S extends Service>(service: S): S {
  built.add(service);
  return service;
}

export const readsRequestsOnly = (service: Service): boolean => built.has(service);
