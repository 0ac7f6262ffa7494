import type * as z from 'zod';
import type { ConfigIssue } from './errors.js';

/** Turns zod issues into `{ path, message }` with paths written the way a user reads them: `targets[1].namespace`. */
export function toConfigIssues(root: string, issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  return issues.map((issue) => ({ path: formatPath(root, issue.path), message: issue.message }));
}

/** `formatPath('targets', [1, 'namespace'])` → `targets[1].namespace`. */
export function formatPath(root: string, path: readonly PropertyKey[]): string {
  let out = root;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
