/**
 * Errors of the preflight module. Every class extends `PreflightError` and sets `name`; a check that throws one is
 * reported as `fail` with "could not check: <name>: <message>" (runPreflight), never swallowed.
 */

/** One bad field of an input, named the way a user writes it (`dashboardLabel.name`). */
export interface PreflightIssue {
  path: string;
  message: string;
}

/** Base class of every error raised by `shared/preflight`. */
export class PreflightError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PreflightError';
  }
}

/** The preflight settings (PREFLIGHT_SETTINGS, a CLI file) are not valid: each issue names the field. */
export class PreflightSettingsInvalidError extends PreflightError {
  readonly issues: PreflightIssue[];

  constructor(source: string, issues: PreflightIssue[]) {
    super(`${source} is not valid: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`);
    this.name = 'PreflightSettingsInvalidError';
    this.issues = issues;
  }
}

/** The Deployment a check needs does not exist (most checks then have nothing to look at). */
export class PreflightDeploymentNotFoundError extends PreflightError {
  readonly namespace: string;
  readonly deployment: string;

  constructor(namespace: string, deployment: string) {
    super(
      `Deployment ${namespace}/${deployment} not found; accepted: the target's namespace and deployment of a live vLLM Deployment`,
    );
    this.name = 'PreflightDeploymentNotFoundError';
    this.namespace = namespace;
    this.deployment = deployment;
  }
}

/** The Deployment's Pod template has no container to check (spec.template.spec.containers is empty or missing). */
export class PreflightPodTemplateInvalidError extends PreflightError {
  readonly deployment: string;

  constructor(deployment: string, problem: string) {
    super(`Deployment ${deployment}: ${problem}; accepted: a Pod template with a vLLM container`);
    this.name = 'PreflightPodTemplateInvalidError';
    this.deployment = deployment;
  }
}

/** The registry was asked for a check id it does not know. */
export class PreflightUnknownCheckError extends PreflightError {
  readonly id: string;

  constructor(id: string, known: readonly string[]) {
    super(`no preflight check ${JSON.stringify(id)}; accepted: ${known.join(', ')}`);
    this.name = 'PreflightUnknownCheckError';
    this.id = id;
  }
}
