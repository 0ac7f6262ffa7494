/**
 * Node 20 lacks `Promise.withResolvers` (ES2024, Node 22), which aws-local-stepfunctions calls in every Task state:
 * without it every Task fails. Installed once, before a local run; a no-op where the runtime has it.
 */
export function ensurePromiseWithResolvers(): void {
  const promise = Promise as unknown as { withResolvers?: unknown };
  if (typeof promise.withResolvers === 'function') return;
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const settled = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise: settled, resolve, reject };
    },
  });
}
