// Makes a light stand-in for a Web class (Request, Response) whose real
// object is built only on need: the stand-in's prototype gets every member of
// the class's prototype that it does not answer itself, each running on the
// built object, and then inherits from the class's prototype, so
// `instanceof` and Symbol.toStringTag hold. Inherited members must not run
// on the stand-in itself: it has none of undici's internal state.

/**
 * `own`: the member names the stand-in's class defines itself; `built`: the
 * real object for a stand-in, made on the first call and kept.
 */
export function forwardToBuilt<T extends object>(
  stand: { prototype: object },
  web: { prototype: object },
  own: ReadonlySet<string>,
  built: (self: T) => object,
): void {
  for (const key of Reflect.ownKeys(web.prototype)) {
    if (key === 'constructor' || (typeof key === 'string' && own.has(key))) continue;
    const d = Object.getOwnPropertyDescriptor(web.prototype, key)!;
    if (d.get) {
      Object.defineProperty(stand.prototype, key, {
        get(this: T) {
          return Reflect.get(built(this), key);
        },
        configurable: true,
      });
    } else if (typeof d.value === 'function') {
      Object.defineProperty(stand.prototype, key, {
        value(this: T, ...args: unknown[]) {
          const real = built(this);
          return (Reflect.get(real, key) as (...a: unknown[]) => unknown).apply(real, args);
        },
        writable: true,
        configurable: true,
      });
    }
  }
  Object.setPrototypeOf(stand.prototype, web.prototype);
}
