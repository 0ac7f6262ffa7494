import { KubeApiBadRequestError } from './errors.js';
import type { LabelSelector } from './types.js';

/** Whether `labels` satisfy `selector` (an empty selector matches everything), as Kubernetes evaluates it. */
export function matchesSelector(
  labels: Record<string, string> | undefined,
  selector: LabelSelector | undefined,
): boolean {
  if (!selector) return true;
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (have[key] !== value) return false;
  for (const expr of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(have, expr.key);
    const value = have[expr.key];
    switch (expr.operator) {
      case 'In':
        if (!present || !(expr.values ?? []).includes(value as string)) return false;
        break;
      case 'NotIn':
        if (present && (expr.values ?? []).includes(value as string)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
    }
  }
  return true;
}

/**
 * Parses the `labelSelector` query parameter: `a=b,c!=d,e in (x,y),f notin (z),g,!h` (set-based and equality-based,
 * as `kubectl -l` and client libraries send it).
 */
export function parseLabelSelector(text: string): LabelSelector {
  const selector: Required<LabelSelector> = { matchLabels: {}, matchExpressions: [] };
  for (const term of splitTerms(text)) {
    let m: RegExpMatchArray | null;
    if ((m = term.match(/^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const values = (m[3] ?? '')
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
      selector.matchExpressions.push({ key: m[1] as string, operator: m[2] === 'in' ? 'In' : 'NotIn', values });
    } else if ((m = term.match(/^([\w./-]+)\s*!=\s*([\w.-]*)$/))) {
      selector.matchExpressions.push({ key: m[1] as string, operator: 'NotIn', values: [m[2] as string] });
    } else if ((m = term.match(/^([\w./-]+)\s*==?\s*([\w.-]*)$/))) {
      selector.matchLabels[m[1] as string] = m[2] as string;
    } else if ((m = term.match(/^!([\w./-]+)$/))) {
      selector.matchExpressions.push({ key: m[1] as string, operator: 'DoesNotExist' });
    } else if ((m = term.match(/^([\w./-]+)$/))) {
      selector.matchExpressions.push({ key: m[1] as string, operator: 'Exists' });
    } else {
      throw new KubeApiBadRequestError(`unable to parse requirement: "${term}" in labelSelector "${text}"`);
    }
  }
  return selector;
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      terms.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) terms.push(current.trim());
  return terms.filter(Boolean);
}
