import type * as z from 'zod';
import { ConfigInvalidError, type ConfigIssue } from './errors.js';
import { toConfigIssues } from './zodIssues.js';

/**
 * Reads a function's environment: the variables through `schema`, and the `TARGETS` list through `parseTargetList`.
 * Throws one `ConfigInvalidError` listing every bad variable at once (a target problem reads
 * `TARGETS: targets[1].namespace: ...`). An empty variable counts as unset: deployment tools often write unset
 * variables as "", and defaults must then apply.
 */
export function parseEnvironmentWithTargets<S extends z.ZodType, T>(
  env: Readonly<Record<string, string | undefined>>,
  schema: S,
  parseTargetList: (text: string) => T[],
): { vars: z.output<S>; targets: T[] } {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const issues: ConfigIssue[] = [];
  const parsed = schema.safeParse(present);
  if (!parsed.success) issues.push(...toConfigIssues('', parsed.error.issues));

  let targets: T[] = [];
  if (typeof present.TARGETS === 'string') {
    try {
      targets = parseTargetList(present.TARGETS);
    } catch (error) {
      if (!(error instanceof ConfigInvalidError)) throw error;
      issues.push(...error.issues.map((issue) => ({ path: 'TARGETS', message: `${issue.path}: ${issue.message}` })));
    }
  }
  if (!parsed.success || issues.length > 0) throw new ConfigInvalidError('environment', issues);
  return { vars: parsed.data, targets };
}
