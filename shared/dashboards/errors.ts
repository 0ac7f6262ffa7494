/**
 * Errors of the dashboards module. Every class extends `DashboardError` and sets `name`; none is retryable (they all
 * come from the product's own dashboard definitions or from bad input, never from the network).
 */

/** Base class of every error raised by `shared/dashboards`. */
export class DashboardError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DashboardError';
  }
}

/**
 * A panel query could not be turned into a Grafana template: a placeholder the catalog's builders were given
 * survived (the builders changed the shape of what they emit), or a query uses a variable the dashboard lacks.
 */
export class DashboardTemplateError extends DashboardError {
  readonly expr: string;

  constructor(problem: string, expr: string, options: { cause?: unknown } = {}) {
    super(`dashboard query ${JSON.stringify(expr)}: ${problem}`, options);
    this.name = 'DashboardTemplateError';
    this.expr = expr;
  }
}

/** A caller's option is invalid (e.g. a namespace that is not a DNS-1123 label); names the field. */
export class DashboardInvalidOptionError extends DashboardError {
  readonly field: string;

  constructor(field: string, value: unknown, accepted: string) {
    super(`${field}: ${JSON.stringify(value)} is not valid; accepted: ${accepted}`);
    this.name = 'DashboardInvalidOptionError';
    this.field = field;
  }
}

/** A query was to be rendered for querying but a value for one of its variables was not given. */
export class DashboardMissingVariableError extends DashboardError {
  readonly variable: string;

  constructor(variable: string, expr: string) {
    super(`no value for $${variable} in ${JSON.stringify(expr)}; give it in the values to render with`);
    this.name = 'DashboardMissingVariableError';
    this.variable = variable;
  }
}
