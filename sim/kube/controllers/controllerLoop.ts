import type { Kind, WatchEvent } from '../types.js';
import { WorkloadReconcileError } from './errors.js';
import type { ControllerContext } from './types.js';
import { WorkQueue } from './workQueue.js';

export interface ControllerLoopOptions {
  /** For the log: `deployment`, `replicaset`, ... */
  name: string;
  ctx: ControllerContext;
  /** Which keys a change of each watched kind makes dirty. */
  watches: ReadonlyArray<{ kind: Kind; keys: (event: WatchEvent) => string[] }>;
  /** Every key, for the start and the periodic resync. */
  resyncKeys: () => string[];
  reconcile: (key: string) => Promise<void> | void;
}

export interface ControllerLoop {
  queue: WorkQueue;
  stop(): Promise<void>;
}

/**
 * The loop every controller runs, as kube-controller-manager's do: watch events and a periodic resync put keys on
 * a work queue; one reconcile at a time brings the world to the desired state; a failed reconcile is logged with its
 * key and retried with backoff.
 */
export function startControllerLoop(options: ControllerLoopOptions): ControllerLoop {
  const { ctx, name } = options;
  const queue = new WorkQueue(
    (key) => options.reconcile(key),
    (key, error, retryInMs) =>
      ctx.log(`${new WorkloadReconcileError(name, key, { cause: error }).message} (retrying in ${retryInMs} ms)`),
  );
  const unsubscribes = options.watches.map(({ kind, keys }) =>
    ctx.store.watch(kind, (event) => {
      for (const key of keys(event)) queue.add(key);
    }),
  );
  const resync = () => {
    for (const key of options.resyncKeys()) queue.add(key);
  };
  const timer = setInterval(resync, ctx.resyncIntervalMs);
  timer.unref();
  resync();
  return {
    queue,
    async stop() {
      clearInterval(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
      await queue.stop();
    },
  };
}
