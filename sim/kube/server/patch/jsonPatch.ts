import { KubeApiBadRequestError, KubeApiPatchNotApplicableError } from '../../errors.js';
import { isJsonObject, jsonEqual, type JsonObject } from './json.js';

/** One RFC 6902 operation. */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

const OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;

/**
 * Checks that `body` is an RFC 6902 patch document (an array of operations with the members each op requires).
 * A malformed document is 400 BadRequest, as the real server answers when it cannot decode the patch.
 */
export function parseJsonPatch(body: unknown): JsonPatchOperation[] {
  if (!Array.isArray(body)) {
    throw new KubeApiBadRequestError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  return body.map((raw, index) => {
    if (!isJsonObject(raw)) throw new KubeApiBadRequestError(`json patch operation ${index} is not an object`);
    const op = raw.op;
    if (typeof op !== 'string' || !(OPS as readonly string[]).includes(op)) {
      throw new KubeApiBadRequestError(
        `json patch operation ${index}: op ${JSON.stringify(op)} is not one of ${OPS.join(', ')}`,
      );
    }
    if (typeof raw.path !== 'string') {
      throw new KubeApiBadRequestError(`json patch operation ${index} (${op}): path must be a string`);
    }
    if ((op === 'move' || op === 'copy') && typeof raw.from !== 'string') {
      throw new KubeApiBadRequestError(`json patch operation ${index} (${op}): from must be a string`);
    }
    if ((op === 'add' || op === 'replace' || op === 'test') && !('value' in raw)) {
      throw new KubeApiBadRequestError(`json patch operation ${index} (${op}): value is required`);
    }
    return raw as unknown as JsonPatchOperation;
  });
}

/**
 * Applies RFC 6902 operations in order to a copy of `document` and returns it. An operation that does not apply (a
 * missing path, a failed `test`) is 422, and no operation takes effect (RFC 6902 section 5: the patch is atomic).
 */
export function applyJsonPatch(document: unknown, operations: readonly JsonPatchOperation[]): unknown {
  let doc = structuredClone(document);
  for (const operation of operations) {
    switch (operation.op) {
      case 'add':
        doc = add(doc, operation.path, structuredClone(operation.value), 'add');
        break;
      case 'remove':
        doc = remove(doc, operation.path, 'remove').doc;
        break;
      case 'replace': {
        get(doc, operation.path, 'replace');
        doc = set(doc, operation.path, structuredClone(operation.value), 'replace');
        break;
      }
      case 'move': {
        if (operation.path.startsWith(`${operation.from}/`)) {
          throw new KubeApiPatchNotApplicableError(
            `move operation does not apply: "${operation.path}" is a child of "${operation.from}"`,
          );
        }
        const removed = remove(doc, operation.from, 'move');
        doc = add(removed.doc, operation.path, removed.value, 'move');
        break;
      }
      case 'copy':
        doc = add(doc, operation.path, structuredClone(get(doc, operation.from, 'copy')), 'copy');
        break;
      case 'test': {
        const actual = get(doc, operation.path, 'test');
        if (!jsonEqual(actual, operation.value)) {
          throw new KubeApiPatchNotApplicableError(`testing value ${operation.path} failed: test failed`);
        }
        break;
      }
    }
  }
  return doc;
}

/** RFC 6901 JSON pointer → reference tokens (`~1` is `/`, `~0` is `~`). */
function tokens(pointer: string, op: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new KubeApiPatchNotApplicableError(`${op} operation does not apply: "${pointer}" is not a JSON pointer`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function missing(op: string, pointer: string): KubeApiPatchNotApplicableError {
  return new KubeApiPatchNotApplicableError(`${op} operation does not apply: doc is missing path: "${pointer}"`);
}

function arrayIndex(token: string, length: number, allowEnd: boolean, op: string, pointer: string): number {
  if (allowEnd && token === '-') return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw missing(op, pointer);
  const index = Number(token);
  if (index > length || (!allowEnd && index === length)) {
    throw new KubeApiPatchNotApplicableError(`${op} operation does not apply: index ${index} out of bounds`);
  }
  return index;
}

/** The container holding the pointer's last token, and that token. */
function parentOf(doc: unknown, pointer: string, op: string): { parent: unknown; last: string } {
  const path = tokens(pointer, op);
  const last = path.pop() as string;
  let node = doc;
  for (const token of path) {
    if (Array.isArray(node)) node = node[arrayIndex(token, node.length, false, op, pointer)];
    else if (isJsonObject(node) && Object.hasOwn(node, token)) node = node[token];
    else throw missing(op, pointer);
  }
  return { parent: node, last };
}

function get(doc: unknown, pointer: string, op: string): unknown {
  if (pointer === '') return doc;
  const { parent, last } = parentOf(doc, pointer, op);
  if (Array.isArray(parent)) return parent[arrayIndex(last, parent.length, false, op, pointer)];
  if (isJsonObject(parent) && Object.hasOwn(parent, last)) return parent[last];
  throw missing(op, pointer);
}

function add(doc: unknown, pointer: string, value: unknown, op: string): unknown {
  if (pointer === '') return value;
  const { parent, last } = parentOf(doc, pointer, op);
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true, op, pointer), 0, value);
  else if (isJsonObject(parent)) parent[last] = value;
  else throw missing(op, pointer);
  return doc;
}

function set(doc: unknown, pointer: string, value: unknown, op: string): unknown {
  if (pointer === '') return value;
  const { parent, last } = parentOf(doc, pointer, op);
  if (Array.isArray(parent)) parent[arrayIndex(last, parent.length, false, op, pointer)] = value;
  else (parent as JsonObject)[last] = value;
  return doc;
}

function remove(doc: unknown, pointer: string, op: string): { doc: unknown; value: unknown } {
  if (pointer === '')
    throw new KubeApiPatchNotApplicableError(`${op} operation does not apply: cannot remove the root`);
  const { parent, last } = parentOf(doc, pointer, op);
  if (Array.isArray(parent)) {
    const [value] = (parent as unknown[]).splice(arrayIndex(last, parent.length, false, op, pointer), 1);
    return { doc, value };
  }
  if (isJsonObject(parent) && Object.hasOwn(parent, last)) {
    const value = parent[last];
    delete parent[last];
    return { doc, value };
  }
  throw missing(op, pointer);
}
