import { KubeApiBadRequestError } from '../../errors.js';
import { jsonText } from '../patch/json.js';

type Step =
  | { type: 'field'; name: string }
  | { type: 'index'; index: number }
  | { type: 'all' }
  | { type: 'filter'; path: string[]; value: string };

/**
 * Evaluates the JSONPath subset that CRD `additionalPrinterColumns` use (`.status.x`, `.spec.list[0].y`,
 * `.spec.list[*].name`, `.status.conditions[?(@.type=="Ready")].status`) and returns every match, in order.
 */
export function evaluateJsonPath(expression: string, root: unknown): unknown[] {
  let current: unknown[] = [root];
  for (const step of parse(expression)) {
    const next: unknown[] = [];
    for (const node of current) {
      switch (step.type) {
        case 'field':
          if (isObject(node) && step.name in node) next.push(node[step.name]);
          break;
        case 'index':
          if (Array.isArray(node)) {
            const at = step.index < 0 ? node.length + step.index : step.index;
            if (at >= 0 && at < node.length) next.push(node[at]);
          }
          break;
        case 'all':
          if (Array.isArray(node)) next.push(...(node as unknown[]));
          else if (isObject(node)) next.push(...Object.values(node));
          break;
        case 'filter':
          if (Array.isArray(node)) {
            for (const item of node as unknown[]) {
              const value = step.path.reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), item);
              if (value !== undefined && jsonText(value) === step.value) next.push(item);
            }
          }
          break;
      }
    }
    current = next;
  }
  return current.filter((v) => v !== undefined);
}

/** Formats a value as Go's `fmt.Print` does in the real server's JSONPath printer (`[a b]`, `map[k:v]`). */
export function formatJsonPathValue(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(formatJsonPathValue).join(' ')}]`;
  if (isObject(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${k}:${formatJsonPathValue(value[k])}`);
    return `map[${entries.join(' ')}]`;
  }
  return jsonText(value);
}

function parse(expression: string): Step[] {
  let text = expression.trim();
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1);
  if (text.startsWith('$')) text = text.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '.') {
      const m = /^\.([A-Za-z0-9_-]+)/.exec(text.slice(i));
      if (!m) throw bad(expression);
      steps.push({ type: 'field', name: m[1] as string });
      i += m[0].length;
    } else if (ch === '[') {
      const end = text.indexOf(']', i);
      if (end < 0) throw bad(expression);
      steps.push(bracket(text.slice(i + 1, end), expression));
      i = end + 1;
    } else {
      throw bad(expression);
    }
  }
  return steps;
}

function bracket(inner: string, expression: string): Step {
  const body = inner.trim();
  if (body === '*') return { type: 'all' };
  if (/^-?\d+$/.test(body)) return { type: 'index', index: Number(body) };
  const quoted = /^'([^']*)'$|^"([^"]*)"$/.exec(body);
  if (quoted) return { type: 'field', name: (quoted[1] ?? quoted[2]) as string };
  const filter = /^\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*==\s*(?:"([^"]*)"|'([^']*)'|([^)\s]+))\s*\)$/.exec(body);
  if (filter) {
    return {
      type: 'filter',
      path: (filter[1] as string).split('.').filter(Boolean),
      value: (filter[2] ?? filter[3] ?? filter[4]) as string,
    };
  }
  throw bad(expression);
}

function bad(expression: string): KubeApiBadRequestError {
  return new KubeApiBadRequestError(
    `unsupported JSONPath ${JSON.stringify(expression)}: the twin evaluates .field, [n], [*] and [?(@.a=="b")]`,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
