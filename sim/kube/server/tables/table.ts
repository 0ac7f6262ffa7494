import type { ResourceInfo } from '../../resources.js';
import type { KubeObject } from '../../types.js';
import { ageOf } from './humanDuration.js';
import { evaluateJsonPath, formatJsonPathValue } from './jsonPath.js';
import { column, DEFAULT_PRINTER, PRINTERS, type Printer, type TableColumnDefinition } from './printers.js';

/** A meta.k8s.io Table, what `kubectl get` asks for with `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. */
export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: { resourceVersion?: string };
  columnDefinitions: TableColumnDefinition[];
  rows: Array<{ cells: unknown[]; object?: unknown }>;
}

/** What each row carries besides its cells (`?includeObject=`): nothing, the metadata (default), or the object. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** One CRD `additionalPrinterColumns` entry. */
export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  format?: string;
  description?: string;
  priority?: number;
}

/**
 * KEDA's printer columns (keda.sh CRDs, v2.x), used when the ScaledObject / TriggerAuthentication CRD in the store
 * was created without its `additionalPrinterColumns` (the real CRD always has them).
 */
export const KEDA_PRINTER_COLUMNS: Readonly<Record<string, PrinterColumn[]>> = {
  ScaledObject: [
    { name: 'ScaleTargetKind', type: 'string', jsonPath: '.status.scaleTargetKind' },
    { name: 'ScaleTargetName', type: 'string', jsonPath: '.spec.scaleTargetRef.name' },
    { name: 'Min', type: 'integer', jsonPath: '.spec.minReplicaCount' },
    { name: 'Max', type: 'integer', jsonPath: '.spec.maxReplicaCount' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Active', type: 'string', jsonPath: '.status.conditions[?(@.type=="Active")].status' },
    { name: 'Fallback', type: 'string', jsonPath: '.status.conditions[?(@.type=="Fallback")].status' },
    { name: 'Paused', type: 'string', jsonPath: '.status.conditions[?(@.type=="Paused")].status' },
    { name: 'Triggers', type: 'string', jsonPath: '.status.triggersTypes' },
    { name: 'Authentications', type: 'string', jsonPath: '.status.authenticationsTypes' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  TriggerAuthentication: [
    { name: 'PodIdentity', type: 'string', jsonPath: '.spec.podIdentity.provider' },
    { name: 'Secret', type: 'string', jsonPath: '.spec.secretTargetRef[*].name' },
    { name: 'Env', type: 'string', jsonPath: '.spec.env[*].name' },
    { name: 'VaultAddress', type: 'string', jsonPath: '.spec.hashiCorpVault.address' },
    { name: 'ScaledObjects', type: 'string', jsonPath: '.status.scaledobjects', priority: 1 },
    { name: 'ScaledJobs', type: 'string', jsonPath: '.status.scaledjobs', priority: 1 },
  ],
};

/**
 * Converts objects of one resource to a Table: the built-in printer of the kind, or for a custom resource the
 * printer columns of its CRD (NAME first; NAME and AGE when the CRD has none), as the real server does.
 */
export function toTable(
  resource: ResourceInfo,
  objects: readonly KubeObject[],
  options: {
    nowMs: number;
    resourceVersion?: string;
    includeObject?: IncludeObject;
    /** The CRD of a custom resource, whose printer columns apply. */
    crd?: KubeObject;
    /** `meta.k8s.io/v1` (default) or `meta.k8s.io/v1beta1`, as the client asked. */
    apiVersion?: string;
    /** Leaves out the column definitions (later events of a watch). */
    noHeaders?: boolean;
  },
): Table {
  const printer = options.crd ? crdPrinter(resource, options.crd) : (PRINTERS[resource.kind] ?? DEFAULT_PRINTER);
  const include = options.includeObject ?? 'Metadata';
  return {
    kind: 'Table',
    apiVersion: options.apiVersion ?? 'meta.k8s.io/v1',
    metadata: options.resourceVersion !== undefined ? { resourceVersion: options.resourceVersion } : {},
    columnDefinitions: options.noHeaders ? [] : printer.columns,
    rows: objects.map((object) => ({
      cells: printer.cells(object, options.nowMs),
      ...(include === 'None' ? {} : { object: include === 'Object' ? object : partialMetadata(object) }),
    })),
  };
}

/** The printer of a custom resource from its CRD's `additionalPrinterColumns` for the served version. */
export function crdPrinter(resource: ResourceInfo, crd: KubeObject): Printer {
  const spec = (crd.spec ?? {}) as { versions?: Array<{ name?: string; additionalPrinterColumns?: PrinterColumn[] }> };
  const version = (spec.versions ?? []).find((v) => v.name === resource.version);
  const declared = version?.additionalPrinterColumns ?? [];
  const columns = declared.length > 0 ? declared : (KEDA_PRINTER_COLUMNS[resource.kind] ?? []);
  if (columns.length === 0) return DEFAULT_PRINTER;
  return {
    columns: [
      column('Name', 'Name must be unique within a namespace.', { format: 'name' }),
      ...columns.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? '',
        description: c.description ?? '',
        priority: c.priority ?? 0,
      })),
    ],
    cells: (object, nowMs) => [object.metadata.name, ...columns.map((c) => crdCell(c, object, nowMs))],
  };
}

/** One cell of a CRD column, typed as apiextensions-apiserver's table convertor types it (first match only). */
function crdCell(columnDef: PrinterColumn, object: KubeObject, nowMs: number): unknown {
  let values: unknown[];
  try {
    values = evaluateJsonPath(columnDef.jsonPath, object);
  } catch {
    return null;
  }
  if (values.length === 0) return null;
  const value = values[0];
  switch (columnDef.type) {
    case 'string':
      return formatJsonPathValue(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? value : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? ageOf(value, nowMs) : null;
    default:
      return null;
  }
}

function partialMetadata(object: KubeObject): unknown {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}
