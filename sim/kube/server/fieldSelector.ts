import { KubeApiBadRequestError } from '../errors.js';
import type { Kind, KubeObject } from '../types.js';
import { jsonText } from './patch/json.js';

/** One `field=value` / `field!=value` term of a `fieldSelector`. */
export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

/** Fields every kind can be selected by. */
const COMMON_FIELDS = ['metadata.name', 'metadata.namespace'];

/** The extra selectable fields of the kinds that have some (as registered by the real server's field label funcs). */
const KIND_FIELDS: Partial<Record<Kind, readonly string[]>> = {
  Pod: [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ],
  Event: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  Node: ['spec.unschedulable'],
  Namespace: ['status.phase'],
  Job: ['status.successful'],
};

/**
 * Parses `?fieldSelector=` (`a=b`, `a==b`, `a!=b`, comma-separated). A field the kind cannot be selected by is 400
 * `field label not supported`, as on a real server.
 */
export function parseFieldSelector(text: string, kind: Kind): FieldRequirement[] {
  const allowed = new Set([...COMMON_FIELDS, ...(KIND_FIELDS[kind] ?? [])]);
  return text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((term) => {
      const m = /^([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
      if (!m) throw new KubeApiBadRequestError(`invalid selector: '${text}'; can't understand '${term}'`);
      const field = m[1] as string;
      if (!allowed.has(field)) {
        throw new KubeApiBadRequestError(
          `field label not supported: ${field} (the twin selects ${kind} by ${[...allowed].join(', ')})`,
        );
      }
      return { field, operator: m[2] === '!=' ? '!=' : '=', value: m[3] as string };
    });
}

/** Whether `object` satisfies every requirement (a missing field compares as ""). */
export function matchesFieldSelector(object: KubeObject, requirements: readonly FieldRequirement[]): boolean {
  return requirements.every((r) => (fieldValue(object, r.field) === r.value) === (r.operator === '='));
}

/** Selectable fields whose value lives elsewhere in the object. */
const FIELD_PATHS: Readonly<Record<string, string[]>> = {
  source: ['source', 'component'],
  'status.successful': ['status', 'succeeded'],
};

function fieldValue(object: KubeObject, field: string): string {
  let value: unknown = object;
  for (const key of FIELD_PATHS[field] ?? field.split('.')) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  if (field === 'status.successful') return String((value as number | undefined) ?? 0);
  return value === undefined || value === null ? '' : jsonText(value);
}
