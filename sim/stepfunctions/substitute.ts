import { WorkflowSubstitutionMissingError } from './errors.js';
import type { AslDefinition } from './types.js';

/** `${Name}`: the DefinitionSubstitutions syntax of CloudFormation / serverless-step-functions. */
const PLACEHOLDER = /\$\{([A-Za-z0-9_]+)\}/g;

/** The placeholder names a definition uses, sorted. */
export function placeholdersIn(definition: AslDefinition): string[] {
  const names = new Set<string>();
  walkStrings(definition, (text) => {
    for (const match of text.matchAll(PLACEHOLDER)) if (match[1] !== undefined) names.add(match[1]);
    return text;
  });
  return [...names].sort();
}

/**
 * A copy of the definition with every `${Name}` replaced by its substitution, as Step Functions does at deploy
 * time. Throws WorkflowSubstitutionMissingError listing every placeholder left without a value.
 */
export function substituteDefinition(
  definition: AslDefinition,
  substitutions: Readonly<Record<string, string>>,
): AslDefinition {
  const missing = placeholdersIn(definition).filter((name) => substitutions[name] === undefined);
  if (missing.length > 0) throw new WorkflowSubstitutionMissingError(missing);
  return walkStrings(definition, (text) =>
    text.replace(PLACEHOLDER, (_match, name: string) => substitutions[name] ?? ''),
  ) as AslDefinition;
}

/**
 * Local stand-ins for the Lambda ARNs of a definition: every `${<Name>FunctionArn}` placeholder becomes
 * `arn:aws:lambda:<region>:<account>:function:<prefix>-<Name>`. Only ARN-shaped: locally, handlers run instead.
 */
export function localFunctionArns(
  definition: AslDefinition,
  options: { region?: string; accountId?: string; prefix?: string } = {},
): Record<string, string> {
  const { region = 'us-east-2', accountId = '000000000000', prefix = 'vllm-pilot-local' } = options;
  return Object.fromEntries(
    placeholdersIn(definition)
      .filter((name) => name.endsWith('FunctionArn'))
      .map((name) => [
        name,
        `arn:aws:lambda:${region}:${accountId}:function:${prefix}-${name.slice(0, -'FunctionArn'.length)}`,
      ]),
  );
}

function walkStrings(value: unknown, change: (text: string) => string): unknown {
  if (typeof value === 'string') return change(value);
  if (Array.isArray(value)) return value.map((item) => walkStrings(item, change));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walkStrings(item, change)]));
  return value;
}
