/** Base class of every error of the Prometheus process manager. */
export class PrometheusError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PrometheusError';
  }
}

/**
 * No usable Prometheus binary, and none could be installed. The message is one line telling the user what to do.
 * Not retryable until the user acts.
 */
export class PrometheusNotFoundError extends PrometheusError {
  /** Where the binary was looked for (PROMETHEUS_BIN, PATH directories). */
  readonly searched: readonly string[];

  constructor(message: string, searched: readonly string[], options?: ErrorOptions) {
    super(message, options);
    this.name = 'PrometheusNotFoundError';
    this.searched = searched;
  }
}

/** `apt-get install prometheus` failed. Carried as the `cause` of a PrometheusNotFoundError. */
export class PrometheusInstallError extends PrometheusError {
  readonly command: string;
  readonly exitCode: number | null;
  /** The last lines apt-get printed. */
  readonly outputTail: string;

  constructor(command: string, exitCode: number | null, outputTail: string, options?: ErrorOptions) {
    super(`\`${command}\` failed (exit code ${exitCode ?? 'none'}): ${lastLine(outputTail)}`, options);
    this.name = 'PrometheusInstallError';
    this.command = command;
    this.exitCode = exitCode;
    this.outputTail = outputTail;
  }
}

/** An option given to the manager is invalid (a target, a label, an interval). Not retryable: fix the input. */
export class PrometheusConfigError extends PrometheusError {
  readonly field: string;
  readonly value: unknown;

  constructor(field: string, value: unknown, problem: string, options?: ErrorOptions) {
    super(`${field}: ${problem} (got ${JSON.stringify(value)})`, options);
    this.name = 'PrometheusConfigError';
    this.field = field;
    this.value = value;
  }
}

/** Prometheus exited or did not become ready. The message ends with the tail of its log. */
export class PrometheusStartError extends PrometheusError {
  readonly bin: string;
  readonly logTail: string;

  constructor(bin: string, problem: string, logTail: string, options?: ErrorOptions) {
    super(
      `Prometheus (${bin}) failed to start: ${problem}${logTail ? `\n--- prometheus log (tail) ---\n${logTail}` : ''}`,
      options,
    );
    this.name = 'PrometheusStartError';
    this.bin = bin;
    this.logTail = logTail;
  }
}

/**
 * An explicit `ALERTMANAGER_BIN` that cannot run. (A missing Alertmanager is not an error of its own: the twin starts
 * without one and says so, and only an AMP alert manager definition then fails.) Not retryable until the user acts.
 */
export class AlertmanagerNotFoundError extends PrometheusError {
  /** Where the binary was looked for. */
  readonly searched: readonly string[];

  constructor(message: string, searched: readonly string[], options?: ErrorOptions) {
    super(message, options);
    this.name = 'AlertmanagerNotFoundError';
    this.searched = searched;
  }
}

/** Alertmanager exited or did not become ready. The message ends with the tail of its log. */
export class AlertmanagerStartError extends PrometheusError {
  readonly bin: string;
  readonly logTail: string;

  constructor(bin: string, problem: string, logTail: string, options?: ErrorOptions) {
    super(
      `Alertmanager (${bin}) failed to start: ${problem}${logTail ? `\n--- alertmanager log (tail) ---\n${logTail}` : ''}`,
      options,
    );
    this.name = 'AlertmanagerStartError';
    this.bin = bin;
    this.logTail = logTail;
  }
}

/** A target's state as Prometheus reports it (or `missing` when it has not been discovered yet). */
export interface TargetState {
  job: string;
  address: string;
  health: 'up' | 'down' | 'unknown' | 'missing';
  lastError: string;
}

/** Some targets were not all `up` before the deadline. Retryable: the exporters may still be starting. */
export class PrometheusTargetsDownError extends PrometheusError {
  readonly targets: readonly TargetState[];

  constructor(timeoutMs: number, targets: readonly TargetState[], options?: ErrorOptions) {
    const notUp = targets.filter((target) => target.health !== 'up');
    const listed = notUp
      .map(
        (t) =>
          `${t.job} ${t.address} (${t.health === 'missing' ? 'not discovered yet' : t.health}${t.lastError ? `: ${t.lastError}` : ''})`,
      )
      .join('; ');
    super(`Prometheus targets not up after ${timeoutMs} ms: ${listed}`, options);
    this.name = 'PrometheusTargetsDownError';
    this.targets = targets;
  }
}

/**
 * The remote-write relay (the twin's stand-in for AMP's ingestion path) could not listen. Not retryable: nothing can
 * listen on 127.0.0.1.
 */
export class RemoteWriteRelayStartError extends PrometheusError {
  constructor(problem: string, options?: ErrorOptions) {
    super(`the remote-write relay failed to start: ${problem}`, options);
    this.name = 'RemoteWriteRelayStartError';
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}
