import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { WorkflowDefinitionInvalidError } from './errors.js';
import type { AslDefinition, AslState } from './types.js';

/** The calibration state machine: the one file both the AWS stack and the local runs use. */
export const CALIBRATION_DEFINITION_PATH = fileURLToPath(
  new URL('../../statemachines/calibration.asl.json', import.meta.url),
);

/** Reads and parses an ASL file; throws WorkflowDefinitionInvalidError when it is not a state machine. */
export async function loadDefinition(path: string = CALIBRATION_DEFINITION_PATH): Promise<AslDefinition> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new WorkflowDefinitionInvalidError(path, `cannot be read (${(cause as NodeJS.ErrnoException).code})`, {
      cause,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new WorkflowDefinitionInvalidError(path, `is not JSON: ${(cause as Error).message}`, { cause });
  }
  return asDefinition(json, path);
}

/** Checks the shape the runner relies on (StartAt naming one of the States); the full check is asl-validator's. */
export function asDefinition(json: unknown, source = 'definition'): AslDefinition {
  const candidate = json as Partial<AslDefinition> | null;
  if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate))
    throw new WorkflowDefinitionInvalidError(source, 'is not a JSON object');
  if (candidate.States === null || typeof candidate.States !== 'object')
    throw new WorkflowDefinitionInvalidError(source, 'has no "States" object');
  if (typeof candidate.StartAt !== 'string' || !(candidate.StartAt in candidate.States))
    throw new WorkflowDefinitionInvalidError(
      source,
      `"StartAt" (${JSON.stringify(candidate.StartAt)}) does not name a state; accepted: ${Object.keys(candidate.States).join(', ')}`,
    );
  return candidate as AslDefinition;
}

/** Every state with its name, including those of Parallel branches and Map item processors. */
export function allStates(definition: AslDefinition): Array<{ name: string; state: AslState }> {
  const found: Array<{ name: string; state: AslState }> = [];
  const visit = (machine: AslDefinition) => {
    for (const [name, state] of Object.entries(machine.States)) {
      found.push({ name, state });
      for (const branch of state.Branches ?? []) visit(branch);
      if (state.Iterator) visit(state.Iterator);
      if (state.ItemProcessor) visit(state.ItemProcessor);
    }
  };
  visit(definition);
  return found;
}

/** The Task states of a definition (nested ones included), with their Resource. */
export function taskStates(definition: AslDefinition): Array<{ name: string; resource: string }> {
  return allStates(definition)
    .filter(({ state }) => state.Type === 'Task')
    .map(({ name, state }) => ({ name, resource: state.Resource ?? '' }));
}
