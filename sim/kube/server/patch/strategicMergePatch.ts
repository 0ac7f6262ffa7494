import { KubeApiBadRequestError } from '../../errors.js';
import { isJsonObject, jsonEqual, jsonText, type JsonObject } from './json.js';

/** How a list field merges: by a key of its elements, as a set of primitives, or (undefined) replaced whole. */
export type ListStrategy = { type: 'mergeByKey'; mergeKey: string } | { type: 'mergePrimitives' };

/** The list strategy of the field at `path` (field names from the object's root, list indices left out). */
export type ListStrategyLookup = (path: readonly string[]) => ListStrategy | undefined;

const DELETE = Symbol('delete');
const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVES = '$deleteFromPrimitiveList/';

/**
 * Applies a Kubernetes strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch, documented in
 * "Update API Objects in Place Using kubectl patch" and the strategic-merge-patch design doc): maps merge, `null`
 * deletes, lists with a patch merge key merge element by element, primitive lists with the merge strategy form a set,
 * other lists are replaced. Directives: `$patch: replace|delete|merge` on maps and list elements, `$retainKeys`,
 * `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`. Returns a new value; directives never reach it.
 */
export function applyStrategicMergePatch(original: unknown, patch: unknown, lookup: ListStrategyLookup): unknown {
  if (!isJsonObject(patch)) {
    throw new KubeApiBadRequestError('a strategic merge patch must be a JSON object');
  }
  const merged = mergeMap(isJsonObject(original) ? original : {}, patch, [], lookup);
  return merged === DELETE ? {} : merged;
}

function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  path: readonly string[],
  lookup: ListStrategyLookup,
): JsonObject | typeof DELETE {
  const directive = patch.$patch;
  if (directive === 'delete') return DELETE;
  if (directive === 'replace') return stripDirectives(patch) as JsonObject;
  if (directive !== undefined && directive !== 'merge') {
    throw new KubeApiBadRequestError(`Unknown patch type: ${jsonText(directive)} in map at ${fieldPath(path)}`);
  }

  const result: JsonObject = { ...original };
  const retainKeys = patch.$retainKeys;
  if (retainKeys !== undefined) {
    if (!Array.isArray(retainKeys) || !retainKeys.every((k) => typeof k === 'string')) {
      throw new KubeApiBadRequestError(`$retainKeys at ${fieldPath(path)} must be a list of field names`);
    }
    for (const key of Object.keys(result)) if (!retainKeys.includes(key)) delete result[key];
  }

  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith(SET_ORDER)) continue;
    if (key.startsWith(DELETE_PRIMITIVES)) {
      const field = key.slice(DELETE_PRIMITIVES.length);
      const current = result[field];
      if (!Array.isArray(value)) {
        throw new KubeApiBadRequestError(`${key} at ${fieldPath(path)} must be a list`);
      }
      if (Array.isArray(current)) result[field] = current.filter((v) => !value.some((d) => jsonEqual(d, v)));
      continue;
    }
    if (value === null) {
      delete result[key];
      continue;
    }
    const childPath = [...path, key];
    const current = result[key];
    if (isJsonObject(value)) {
      const merged = mergeMap(isJsonObject(current) ? current : {}, value, childPath, lookup);
      if (merged === DELETE) delete result[key];
      else result[key] = merged;
    } else if (Array.isArray(value)) {
      const strategy = lookup(childPath);
      const order = patch[`${SET_ORDER}${key}`];
      result[key] =
        strategy && (Array.isArray(current) || current === undefined)
          ? mergeList(current ?? [], value, strategy, childPath, lookup, order)
          : replaceList(value);
    } else {
      result[key] = value;
    }
  }

  // An order directive may come without the list itself (only the order changed).
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const field = key.slice(SET_ORDER.length);
    if (field in patch) continue;
    const current = result[field];
    const strategy = lookup([...path, field]);
    if (Array.isArray(current) && strategy) result[field] = reorder(current, order, strategy, [...path, field]);
  }
  return result;
}

function mergeList(
  original: unknown[],
  patch: unknown[],
  strategy: ListStrategy,
  path: readonly string[],
  lookup: ListStrategyLookup,
  order: unknown,
): unknown[] {
  if (strategy.type === 'mergePrimitives') {
    const result = [...original];
    for (const value of patch) if (!result.some((v) => jsonEqual(v, value))) result.push(value);
    return order === undefined ? result : reorder(result, order, strategy, path);
  }

  // `{"$patch": "replace"}` as an element: the rest of the patch list replaces the list.
  if (patch.some((el) => isJsonObject(el) && el.$patch === 'replace')) {
    return replaceList(patch.filter((el) => !(isJsonObject(el) && el.$patch === 'replace')));
  }
  const { mergeKey } = strategy;
  let result = original.map((el) => structuredClone(el));
  for (const element of patch) {
    if (!isJsonObject(element)) {
      throw new KubeApiBadRequestError(`the list at ${fieldPath(path)} merges by ${mergeKey}: element is not a map`);
    }
    if (!(mergeKey in element)) {
      throw new KubeApiBadRequestError(
        `map: ${JSON.stringify(element)} does not contain declared merge key: ${mergeKey} (at ${fieldPath(path)})`,
      );
    }
    const keyValue = element[mergeKey];
    const matches = (el: unknown) => isJsonObject(el) && jsonEqual(el[mergeKey], keyValue);
    if (element.$patch === 'delete') {
      result = result.filter((el) => !matches(el));
      continue;
    }
    const index = result.findIndex(matches);
    const merged = mergeMap(index >= 0 ? (result[index] as JsonObject) : {}, element, path, lookup);
    if (merged === DELETE) result = result.filter((el) => !matches(el));
    else if (index >= 0) result[index] = merged;
    else result.push(merged);
  }
  return order === undefined ? result : reorder(result, order, strategy, path);
}

/**
 * `$setElementOrder`: the listed elements come in the given order; elements it does not name keep their relative
 * order after them (the real server interleaves those by their old position; the twin keeps it simple).
 */
function reorder(list: unknown[], order: unknown, strategy: ListStrategy, path: readonly string[]): unknown[] {
  if (!Array.isArray(order)) {
    throw new KubeApiBadRequestError(`$setElementOrder at ${fieldPath(path)} must be a list`);
  }
  const keyOf = (el: unknown): unknown =>
    strategy.type === 'mergeByKey' ? (isJsonObject(el) ? el[strategy.mergeKey] : undefined) : el;
  const wanted = order.map(keyOf);
  const rank = (el: unknown) => wanted.findIndex((k) => jsonEqual(k, keyOf(el)));
  const listed = list.filter((el) => rank(el) >= 0).sort((a, b) => rank(a) - rank(b));
  const rest = list.filter((el) => rank(el) < 0);
  return [...listed, ...rest];
}

function replaceList(list: unknown[]): unknown[] {
  return list.map((el) => stripDirectives(el));
}

/** Drops `$patch`, `$retainKeys`, `$setElementOrder/...` and friends from a value that is copied in whole. */
function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    if (key.startsWith('$')) continue;
    out[key] = stripDirectives(child);
  }
  return out;
}

function fieldPath(path: readonly string[]): string {
  return path.length === 0 ? '<root>' : path.join('.');
}
