import { ConfigInvalidError, TARGET_FIELDS, targetView, unknownTargetFields } from '../../shared/config/index.js';
import { CliFileInvalidError } from '../errors.js';
import { readStructuredFile } from '../readFile.js';

/**
 * The targets of a command against an account: the stack's own `targets` list from a file (`--targets`), or one
 * target from flags. Either way each command's parser is the function's own (the same schema, the same messages),
 * given the fields that function reads, as the stack gives them.
 */

/** The flag of each target field. */
export const TARGET_FLAGS = {
  name: '--name',
  cluster: '--cluster',
  namespace: '--namespace',
  deployment: '--deployment',
  model: '--model',
  clusterLabel: '--cluster-label',
  service: '--service',
  scaledObject: '--scaled-object',
} as const;
export type TargetFlagField = keyof typeof TARGET_FLAGS;

/** The flag a flag target's field came from (its `alerts` settings: the --alerts file). */
const FLAG_OF = { ...TARGET_FLAGS, alerts: '--alerts' } as const;

/** The fields a target from flags must have (the name defaults to the Deployment's). */
const REQUIRED_FLAGS: readonly TargetFlagField[] = ['cluster', 'namespace', 'deployment', 'model'];

/** Which function's view of a target the command takes (TARGET_FIELDS). */
export type TargetConsumer = keyof typeof TARGET_FIELDS;

export interface TargetSelection {
  /** `--targets FILE`: the stack's `targets` list (YAML or JSON). */
  file?: string;
  /** The target flags given. */
  flags: Partial<Record<TargetFlagField, string>>;
  /** Fields a flag target takes from elsewhere (its `alerts` settings from `--alerts FILE`). */
  extra?: Record<string, unknown>;
}

/** True when any target flag (or --targets) was given. */
export function hasTargetSelection(selection: TargetSelection): boolean {
  return selection.file !== undefined || Object.values(selection.flags).some((value) => value !== undefined);
}

/**
 * Reads the selection with `parse` (the consumer's parser, which throws ConfigInvalidError naming `targets[i].field`).
 * A file's problems are named `--targets FILE: targets[1].namespace: ...`; a flag's `--namespace: ...`.
 */
export async function readTargets<T>(
  selection: TargetSelection,
  consumer: TargetConsumer,
  parse: (value: unknown) => T[],
): Promise<T[]> {
  const fields = TARGET_FIELDS[consumer] as readonly string[];
  if (selection.file !== undefined) {
    const given = Object.entries(selection.flags).filter(([, value]) => value !== undefined);
    if (given.length > 0)
      throw new CliFileInvalidError(
        '--targets',
        selection.file,
        `give the targets either in this file or as flags, not both (also given: ${given.map(([field]) => TARGET_FLAGS[field as TargetFlagField]).join(', ')})`,
      );
    const value = await readStructuredFile('--targets', selection.file);
    if (!Array.isArray(value))
      throw new CliFileInvalidError(
        '--targets',
        selection.file,
        "must hold a list of targets: the stack's `targets` parameter",
      );
    const entries = value as unknown[];
    const unknown = unknownTargetFields(entries);
    if (unknown.length > 0) throw new ConfigInvalidError(`--targets ${selection.file}`, unknown);
    try {
      return parse(targetView(entries, fields));
    } catch (error) {
      if (error instanceof ConfigInvalidError)
        throw new ConfigInvalidError(`--targets ${selection.file}`, error.issues, { cause: error });
      throw error;
    }
  }
  const missing = REQUIRED_FLAGS.filter((field) => selection.flags[field] === undefined);
  if (missing.length > 0)
    throw new ConfigInvalidError(
      'target',
      missing.map((field) => ({
        path: TARGET_FLAGS[field],
        message: 'is required (or give the targets in a file: --targets FILE)',
      })),
    );
  const entry: Record<string, unknown> = { ...selection.extra };
  for (const [field, value] of Object.entries(selection.flags))
    if (value !== undefined && fields.includes(field)) entry[field] = value;
  entry.name ??= selection.flags.deployment;
  try {
    return parse([entry]);
  } catch (error) {
    if (!(error instanceof ConfigInvalidError)) throw error;
    // `targets[0].namespace` is the flag the user wrote.
    const issues = error.issues.map((issue) => {
      const field = /^targets\[0\]\.(\w+)(.*)$/.exec(issue.path);
      const flag = field === null ? undefined : FLAG_OF[field[1] as keyof typeof FLAG_OF];
      return flag === undefined ? issue : { path: `${flag}${field?.[2] ?? ''}`, message: issue.message };
    });
    throw new ConfigInvalidError('target', issues, { cause: error });
  }
}
