import { taskStates } from './definition.js';
import { WorkflowHandlerMissingError, WorkflowHandlerUnknownStateError } from './errors.js';
import type { AslDefinition, LocalTaskHandler } from './types.js';

/**
 * Checks that every Task state of the definition has a local handler and that no handler names a state the
 * definition lacks. Throws WorkflowHandlerMissingError / WorkflowHandlerUnknownStateError naming them.
 */
export function checkLocalHandlers(
  definition: AslDefinition,
  handlers: Readonly<Record<string, LocalTaskHandler>>,
): void {
  const tasks = taskStates(definition).map((t) => t.name);
  const given = Object.keys(handlers).filter((name) => typeof handlers[name] === 'function');
  const missing = tasks.filter((name) => !given.includes(name));
  if (missing.length > 0) throw new WorkflowHandlerMissingError(missing, given);
  const unknown = Object.keys(handlers).filter((name) => !tasks.includes(name));
  if (unknown.length > 0) throw new WorkflowHandlerUnknownStateError(unknown, tasks);
}

/**
 * The state-name table the runner takes, built from handlers keyed by what a Task state calls: a placeholder name
 * (`CleanupFunctionArn` for `${CleanupFunctionArn}`) or a service integration ARN (`arn:aws:states:::sns:publish`).
 * States with no match are left out, so the runner's check names them.
 */
export function handlersByResource(
  definition: AslDefinition,
  byResource: Readonly<Record<string, LocalTaskHandler>>,
): Record<string, LocalTaskHandler> {
  const table: Record<string, LocalTaskHandler> = {};
  for (const { name, resource } of taskStates(definition)) {
    const key = /^\$\{([A-Za-z0-9_]+)\}$/.exec(resource)?.[1] ?? resource;
    const handler = byResource[key];
    if (handler !== undefined) table[name] = handler;
  }
  return table;
}
