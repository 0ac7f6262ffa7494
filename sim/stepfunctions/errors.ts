/**
 * Errors of the local workflow runner. Every class extends `WorkflowError` and sets `name`. None is retryable: they
 * say the definition, the substitutions or the handler table given to the runner are wrong, which a retry cannot fix.
 */

/** Base class of every error raised by the local runner (`sim/stepfunctions`). */
export class WorkflowError extends Error {
  readonly retryable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WorkflowError';
  }
}

/** The definition is not a state machine the runner can execute (not JSON, no States, refused by the validator). */
export class WorkflowDefinitionInvalidError extends WorkflowError {
  constructor(
    readonly source: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`state machine definition ${source} is invalid: ${problem}`, options);
    this.name = 'WorkflowDefinitionInvalidError';
  }
}

/** `${Name}` placeholders in the definition that the substitutions do not define. */
export class WorkflowSubstitutionMissingError extends WorkflowError {
  constructor(readonly placeholders: readonly string[]) {
    super(
      `the definition uses ${placeholders.length} placeholder(s) with no substitution: ${placeholders.join(', ')}; ` +
        'accepted: a substitutions entry for each (DefinitionSubstitutions in AWS)',
    );
    this.name = 'WorkflowSubstitutionMissingError';
  }
}

/**
 * Task states with no local handler. The runner refuses to start: aws-local-stepfunctions would call the real Lambda
 * for them, and a `Catch: States.ALL` would then hide the failure.
 */
export class WorkflowHandlerMissingError extends WorkflowError {
  constructor(
    readonly states: readonly string[],
    readonly known: readonly string[],
  ) {
    super(
      `${states.length} Task state(s) have no local handler: ${states.join(', ')}; every Task state needs one ` +
        `(handlers given: ${known.length > 0 ? known.join(', ') : 'none'})`,
    );
    this.name = 'WorkflowHandlerMissingError';
  }
}

/** Handlers given for states the definition does not have as Task states (a typo would otherwise go unnoticed). */
export class WorkflowHandlerUnknownStateError extends WorkflowError {
  constructor(
    readonly names: readonly string[],
    readonly taskStates: readonly string[],
  ) {
    super(
      `local handler(s) for state(s) that are not Task states of the definition: ${names.join(', ')}; ` +
        `accepted: ${taskStates.join(', ')}`,
    );
    this.name = 'WorkflowHandlerUnknownStateError';
  }
}

/** A runner option is out of range. */
export class WorkflowOptionInvalidError extends WorkflowError {
  constructor(
    readonly option: string,
    problem: string,
    accepted: string,
  ) {
    super(`${option} ${problem}; accepted: ${accepted}`);
    this.name = 'WorkflowOptionInvalidError';
  }
}
