/** Base class of the workload controllers' errors (Deployments, Pods, Services, DaemonSets, Jobs). */
export class WorkloadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WorkloadError';
  }
}

/** A startWorkloadControllers option is missing or out of range. */
export class WorkloadOptionsInvalidError extends WorkloadError {
  constructor(
    readonly field: string,
    readonly value: unknown,
    accepted: string,
  ) {
    super(`startWorkloadControllers: ${field} is ${describe(value)}; expected ${accepted}`);
    this.name = 'WorkloadOptionsInvalidError';
  }
}

/**
 * A vLLM container argument the twin cannot use (as vLLM's argparse would reject it): the container "crashes" with
 * this message in its log, exactly as a real Pod with a bad flag goes into CrashLoopBackOff.
 */
export class WorkloadContainerArgsError extends WorkloadError {
  constructor(
    readonly pod: string,
    readonly arg: string,
    readonly value: unknown,
    accepted: string,
  ) {
    super(`pod ${pod}: argument ${arg}: invalid value ${describe(value)} (expected ${accepted})`);
    this.name = 'WorkloadContainerArgsError';
  }
}

/** A Pod was asked to act on its vLLM container (a crash) while it runs no vLLM replica. */
export class WorkloadPodNotRunningError extends WorkloadError {
  constructor(
    readonly namespace: string,
    readonly pod: string,
  ) {
    super(`pod ${namespace}/${pod} runs no vLLM replica (not a vLLM Pod, gone, or still starting)`);
    this.name = 'WorkloadPodNotRunningError';
  }
}

/** A reconcile step failed; it is retried on the next event or resync. Carries the controller and the object key. */
export class WorkloadReconcileError extends WorkloadError {
  constructor(
    readonly controller: string,
    readonly key: string,
    options: { cause: unknown },
  ) {
    super(
      `${controller} ${key}: reconcile failed: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`,
      options,
    );
    this.name = 'WorkloadReconcileError';
  }
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : (JSON.stringify(value) ?? String(value));
}
