import type { Kind, KubeObject } from '../../types.js';
import { jsonText } from '../patch/json.js';
import { ageOf } from './humanDuration.js';

/** A column of a meta.k8s.io/v1 Table. `priority` 1 columns are shown by `kubectl get -o wide` only. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** How one kind prints: its columns and the cells of one object (as many cells as columns). */
export interface Printer {
  columns: TableColumnDefinition[];
  cells(object: KubeObject, nowMs: number): unknown[];
}

type Obj = Record<string, unknown>;

/** A column; `wide` columns have priority 1. */
export function column(
  name: string,
  description: string,
  options: { type?: string; format?: string; wide?: boolean } = {},
) {
  return {
    name,
    type: options.type ?? 'string',
    format: options.format ?? '',
    description,
    priority: options.wide ? 1 : 0,
  };
}

const NAME = column('Name', 'Name must be unique within a namespace.', { format: 'name' });
const AGE = column(
  'Age',
  'CreationTimestamp is a timestamp representing the server time when this object was created.',
);

/** NAME and AGE: what the server prints for a kind with no printer of its own. */
export const DEFAULT_PRINTER: Printer = {
  columns: [NAME, AGE],
  cells: (o, now) => [o.metadata.name, ageOf(o.metadata.creationTimestamp, now)],
};

/**
 * The printers of the kinds the twin serves, after kubernetes/pkg/printers/internalversion/printers.go (v1.30):
 * same columns, same cell formats. The server always sends the wide columns; kubectl hides them unless `-o wide`.
 */
export const PRINTERS: Partial<Record<Kind, Printer>> = {
  Deployment: {
    columns: [
      NAME,
      column('Ready', 'Number of the pod with ready state'),
      column(
        'Up-to-date',
        'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      ),
      column(
        'Available',
        'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      ),
      AGE,
      column('Containers', 'Names of each container in the template.', { wide: true }),
      column('Images', 'Images referenced by each container in the template.', { wide: true }),
      column('Selector', 'Label selector for pods.', { wide: true }),
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const { names, images } = containerCells(obj(obj(spec.template).spec));
      return [
        o.metadata.name,
        `${int(status.readyReplicas)}/${int(spec.replicas, 1)}`,
        int(status.updatedReplicas),
        int(status.availableReplicas),
        ageOf(o.metadata.creationTimestamp, now),
        names,
        images,
        selectorString(spec.selector),
      ];
    },
  },
  ReplicaSet: {
    columns: [
      NAME,
      column('Desired', 'Number of desired pods.', { type: 'integer' }),
      column('Current', 'Number of actual pods.', { type: 'integer' }),
      column('Ready', 'The number of ready pods.', { type: 'integer' }),
      AGE,
      column('Containers', 'Names of each container in the template.', { wide: true }),
      column('Images', 'Images referenced by each container in the template.', { wide: true }),
      column('Selector', 'Label selector for pods.', { wide: true }),
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const { names, images } = containerCells(obj(obj(spec.template).spec));
      return [
        o.metadata.name,
        int(spec.replicas, 1),
        int(status.replicas),
        int(status.readyReplicas),
        ageOf(o.metadata.creationTimestamp, now),
        names,
        images,
        selectorString(spec.selector),
      ];
    },
  },
  DaemonSet: {
    columns: [
      NAME,
      column('Desired', 'The total number of nodes that should be running the daemon pod.', { type: 'integer' }),
      column('Current', 'The number of nodes that are running at least 1 daemon pod.', { type: 'integer' }),
      column(
        'Ready',
        'The number of nodes that should be running the daemon pod and have one or more running and ready.',
        {
          type: 'integer',
        },
      ),
      column('Up-to-date', 'The total number of nodes that are running updated daemon pod.', { type: 'integer' }),
      column('Available', 'The number of nodes that should be running the daemon pod and have one or more available.', {
        type: 'integer',
      }),
      column('Node Selector', 'NodeSelector is a selector which must be true for the pod to fit on a node.'),
      AGE,
      column('Containers', 'Names of each container in the template.', { wide: true }),
      column('Images', 'Images referenced by each container in the template.', { wide: true }),
      column('Selector', 'Label selector for pods.', { wide: true }),
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const podSpec = obj(obj(spec.template).spec);
      const { names, images } = containerCells(podSpec);
      return [
        o.metadata.name,
        int(status.desiredNumberScheduled),
        int(status.currentNumberScheduled),
        int(status.numberReady),
        int(status.updatedNumberScheduled),
        int(status.numberAvailable),
        mapString(podSpec.nodeSelector),
        ageOf(o.metadata.creationTimestamp, now),
        names,
        images,
        selectorString(spec.selector),
      ];
    },
  },
  Pod: {
    columns: [
      NAME,
      column('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
      column('Status', 'The aggregate status of the containers in this pod.'),
      column(
        'Restarts',
        'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
      ),
      AGE,
      column(
        'IP',
        'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
        {
          wide: true,
        },
      ),
      column('Node', 'NodeName is a request to schedule this pod onto a specific node.', { wide: true }),
      column('Nominated Node', 'nominatedNodeName is set when this pod preempts other pods on the node.', {
        wide: true,
      }),
      column('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.', {
        wide: true,
      }),
    ],
    cells: podCells,
  },
  Service: {
    columns: [
      NAME,
      column('Type', 'type determines how the Service is exposed.'),
      column('Cluster-IP', 'clusterIP is the IP address of the service.'),
      column(
        'External-IP',
        'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.',
      ),
      column('Port(s)', 'The list of ports that are exposed by this service.'),
      AGE,
      column('Selector', 'Route service traffic to pods with label keys and values matching this selector.', {
        wide: true,
      }),
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      return [
        o.metadata.name,
        str(spec.type) || 'ClusterIP',
        str(spec.clusterIP) || '<none>',
        externalIp(spec, obj(o.status)),
        portsString(spec.ports),
        ageOf(o.metadata.creationTimestamp, now),
        mapString(spec.selector),
      ];
    },
  },
  Job: {
    columns: [
      NAME,
      column('Status', 'Status of the job.'),
      column('Completions', 'The completion status of the job.'),
      column('Duration', 'Time required to complete the job.'),
      AGE,
      column('Containers', 'Names of each container in the template.', { wide: true }),
      column('Images', 'Images referenced by each container in the template.', { wide: true }),
      column('Selector', 'A label query over pods that should match the pod count.', { wide: true }),
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const { names, images } = containerCells(obj(obj(spec.template).spec));
      return [
        o.metadata.name,
        jobStatus(o, status),
        jobCompletions(spec, status),
        jobDuration(status, now),
        ageOf(o.metadata.creationTimestamp, now),
        names,
        images,
        selectorString(spec.selector),
      ];
    },
  },
  HorizontalPodAutoscaler: {
    columns: [
      NAME,
      column('Reference', 'Reference to the target object.'),
      column('Targets', 'The current and target metric values.'),
      column('MinPods', 'The lower limit for the number of pods.'),
      column('MaxPods', 'The upper limit for the number of pods.'),
      column('Replicas', 'Current number of replicas managed by this autoscaler.'),
      AGE,
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const ref = obj(spec.scaleTargetRef);
      return [
        o.metadata.name,
        `${str(ref.kind)}/${str(ref.name)}`,
        hpaTargets(spec.metrics, status.currentMetrics),
        spec.minReplicas === undefined ? '<unset>' : String(int(spec.minReplicas)),
        int(spec.maxReplicas),
        int(status.currentReplicas),
        ageOf(o.metadata.creationTimestamp, now),
      ];
    },
  },
  Namespace: {
    columns: [NAME, column('Status', 'The status of the namespace'), AGE],
    cells: (o, now) => [
      o.metadata.name,
      str(obj(o.status).phase) || 'Active',
      ageOf(o.metadata.creationTimestamp, now),
    ],
  },
  ConfigMap: {
    columns: [NAME, column('Data', 'The number of entries in the config map.', { type: 'integer' }), AGE],
    cells: (o, now) => [
      o.metadata.name,
      Object.keys(obj(o.data)).length + Object.keys(obj(o.binaryData)).length,
      ageOf(o.metadata.creationTimestamp, now),
    ],
  },
  Node: {
    columns: [
      NAME,
      column('Status', 'The status of the node'),
      column('Roles', 'The roles of the node'),
      AGE,
      column('Version', 'Kubelet Version reported by the node.'),
      column('Internal-IP', 'List of addresses reachable to the node.', { wide: true }),
      column('External-IP', 'List of addresses reachable to the node.', { wide: true }),
      column('OS-Image', 'OS Image reported by the node from /etc/os-release.', { wide: true }),
      column('Kernel-Version', 'Kernel Version reported by the node.', { wide: true }),
      column('Container-Runtime', 'Container Runtime Version reported by the node.', { wide: true }),
    ],
    cells: (o, now) => {
      const status = obj(o.status);
      const info = obj(status.nodeInfo);
      const address = (type: string) =>
        list(status.addresses)
          .map(obj)
          .find((a) => a.type === type)?.address;
      return [
        o.metadata.name,
        nodeStatus(o),
        nodeRoles(o.metadata.labels),
        ageOf(o.metadata.creationTimestamp, now),
        str(info.kubeletVersion),
        str(address('InternalIP')) || '<none>',
        str(address('ExternalIP')) || '<none>',
        str(info.osImage) || '<unknown>',
        str(info.kernelVersion) || '<unknown>',
        str(info.containerRuntimeVersion) || '<unknown>',
      ];
    },
  },
  Event: {
    columns: [
      column('Last Seen', 'Time when last event occurred'),
      column('Type', 'Type of this event (Normal, Warning), new types could be added in the future.'),
      column('Reason', 'Reason is why the action was taken.'),
      column('Object', 'The object that this event is about.'),
      column('Message', 'A human-readable description of the status of this operation.'),
    ],
    cells: (o, now) => {
      const involved = obj(o.involvedObject);
      const last = o.lastTimestamp ?? o.eventTime ?? o.firstTimestamp ?? o.metadata.creationTimestamp;
      return [
        ageOf(last, now),
        str(o.type),
        str(o.reason),
        `${str(involved.kind).toLowerCase()}/${str(involved.name)}`,
        str(o.message).trim(),
      ];
    },
  },
  CustomResourceDefinition: {
    columns: [NAME, column('Created At', 'CreationTimestamp of the CRD', { type: 'date' })],
    cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? null],
  },
};

function podCells(o: KubeObject, now: number): unknown[] {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const containers = list(spec.containers);
  let reason = str(status.phase);
  if (str(status.reason)) reason = str(status.reason);
  let restarts = 0;
  let ready = 0;
  let lastRestart: number | undefined;
  let initializing = false;

  const initStatuses = list(status.initContainerStatuses).map(obj);
  for (const [i, cs] of initStatuses.entries()) {
    restarts += int(cs.restartCount);
    const state = obj(cs.state);
    const terminated = state.terminated === undefined ? undefined : obj(state.terminated);
    const waiting = state.waiting === undefined ? undefined : obj(state.waiting);
    if (terminated && int(terminated.exitCode) === 0) continue;
    if (terminated) {
      reason = str(terminated.reason)
        ? `Init:${str(terminated.reason)}`
        : int(terminated.signal) !== 0
          ? `Init:Signal:${int(terminated.signal)}`
          : `Init:ExitCode:${int(terminated.exitCode)}`;
    } else if (waiting && str(waiting.reason) && waiting.reason !== 'PodInitializing') {
      reason = `Init:${str(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${list(spec.initContainers).length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    for (const cs of list(status.containerStatuses).map(obj).reverse()) {
      restarts += int(cs.restartCount);
      const finishedAt = obj(obj(cs.lastState).terminated).finishedAt;
      if (typeof finishedAt === 'string') {
        const at = Date.parse(finishedAt);
        if (!Number.isNaN(at) && (lastRestart === undefined || at > lastRestart)) lastRestart = at;
      }
      const state = obj(cs.state);
      const waiting = state.waiting === undefined ? undefined : obj(state.waiting);
      const terminated = state.terminated === undefined ? undefined : obj(state.terminated);
      if (waiting && str(waiting.reason)) reason = str(waiting.reason);
      else if (terminated && str(terminated.reason)) reason = str(terminated.reason);
      else if (terminated) {
        reason =
          int(terminated.signal) !== 0 ? `Signal:${int(terminated.signal)}` : `ExitCode:${int(terminated.exitCode)}`;
      } else if (cs.ready === true && state.running !== undefined) {
        hasRunning = true;
        ready += 1;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      const podReady = list(status.conditions)
        .map(obj)
        .some((c) => c.type === 'Ready' && c.status === 'True');
      reason = podReady ? 'Running' : 'NotReady';
    }
  }
  if (o.metadata.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';

  const restartsCell =
    restarts !== 0 && lastRestart !== undefined
      ? `${restarts} (${ageOf(new Date(lastRestart).toISOString(), now)} ago)`
      : String(restarts);
  const gates = list(spec.readinessGates).map((g) => str(obj(g).conditionType));
  return [
    o.metadata.name,
    `${ready}/${containers.length}`,
    reason,
    restartsCell,
    ageOf(o.metadata.creationTimestamp, now),
    str(status.podIP) || '<none>',
    str(spec.nodeName) || '<none>',
    str(status.nominatedNodeName) || '<none>',
    gates.length === 0 ? '<none>' : gates.join(', '),
  ];
}

function jobStatus(o: KubeObject, status: Obj): string {
  const has = (type: string) =>
    list(status.conditions)
      .map(obj)
      .some((c) => c.type === type && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (o.metadata.deletionTimestamp) return 'Terminating';
  if (has('Suspended')) return 'Suspended';
  if (has('FailureTarget')) return 'FailureTarget';
  return 'Running';
}

function jobCompletions(spec: Obj, status: Obj): string {
  const succeeded = int(status.succeeded);
  if (spec.completions !== undefined && spec.completions !== null) return `${succeeded}/${int(spec.completions)}`;
  const parallelism = int(spec.parallelism);
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function jobDuration(status: Obj, now: number): string {
  if (typeof status.startTime !== 'string') return '';
  const start = Date.parse(status.startTime);
  const end = typeof status.completionTime === 'string' ? Date.parse(status.completionTime) : now;
  return ageOf(new Date(start).toISOString(), end);
}

/** HPA TARGETS as kubectl shows them: `current/target` per metric, `(avg)` for AverageValue, at most two shown. */
export function hpaTargets(specs: unknown, statuses: unknown): string {
  const metrics = list(specs).map(obj);
  const current = list(statuses).map(obj);
  if (metrics.length === 0) return '<none>';
  const parts = metrics.map((spec, i) => {
    const st = current[i];
    switch (spec.type) {
      case 'External':
      case 'Object': {
        const key = spec.type === 'External' ? 'external' : 'object';
        const target = obj(obj(spec[key]).target);
        const now = st && st[key] !== undefined ? obj(obj(st[key]).current) : undefined;
        if (target.averageValue !== undefined) {
          const cur = now?.averageValue !== undefined ? quantity(now.averageValue) : '<unknown>';
          return `${cur}/${quantity(target.averageValue)} (avg)`;
        }
        const cur = now?.value !== undefined ? quantity(now.value) : '<unknown>';
        return `${cur}/${quantity(target.value)}`;
      }
      case 'Pods': {
        const target = obj(obj(spec.pods).target);
        const now = st && st.pods !== undefined ? obj(obj(st.pods).current) : undefined;
        const cur = now?.averageValue !== undefined ? quantity(now.averageValue) : '<unknown>';
        return `${cur}/${quantity(target.averageValue)}`;
      }
      case 'Resource':
      case 'ContainerResource': {
        const key = spec.type === 'Resource' ? 'resource' : 'containerResource';
        const source = obj(spec[key]);
        const target = obj(source.target);
        const now = st && st[key] !== undefined ? obj(obj(st[key]).current) : undefined;
        const prefix =
          key === 'resource' ? `${str(source.name)}: ` : `${str(source.name)} on ${str(source.container)}: `;
        if (target.averageValue !== undefined) {
          const cur = now?.averageValue !== undefined ? quantity(now.averageValue) : '<unknown>';
          return `${prefix}${cur}/${quantity(target.averageValue)}`;
        }
        const cur = now?.averageUtilization !== undefined ? `${int(now.averageUtilization)}%` : '<unknown>';
        const tgt = target.averageUtilization !== undefined ? `${int(target.averageUtilization)}%` : '<auto>';
        return `${prefix}${cur}/${tgt}`;
      }
      default:
        return '<unknown type>';
    }
  });
  const shown = parts.slice(0, 2).join(', ');
  return parts.length > 2 ? `${shown} + ${parts.length - 2} more...` : shown;
}

/** A label selector as `LabelSelectorAsSelector(...).String()` prints it: requirements sorted by key. */
export function selectorString(selector: unknown): string {
  const sel = obj(selector);
  const terms: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(obj(sel.matchLabels))) terms.push([k, `${k}=${str(v)}`]);
  for (const e of list(sel.matchExpressions).map(obj)) {
    const key = str(e.key);
    const values = list(e.values).map(str).sort().join(',');
    if (e.operator === 'In') terms.push([key, `${key} in (${values})`]);
    else if (e.operator === 'NotIn') terms.push([key, `${key} notin (${values})`]);
    else if (e.operator === 'Exists') terms.push([key, key]);
    else if (e.operator === 'DoesNotExist') terms.push([key, `!${key}`]);
  }
  if (terms.length === 0) return selector === undefined ? '<none>' : '';
  return terms
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, t]) => t)
    .join(',');
}

function containerCells(podSpec: Obj): { names: string; images: string } {
  const containers = list(podSpec.containers).map(obj);
  return { names: containers.map((c) => str(c.name)).join(','), images: containers.map((c) => str(c.image)).join(',') };
}

function externalIp(spec: Obj, status: Obj): string {
  const external = list(spec.externalIPs).map(str);
  switch (str(spec.type) || 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return external.length > 0 ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = list(obj(status.loadBalancer).ingress)
        .map(obj)
        .map((i) => str(i.ip) || str(i.hostname))
        .filter(Boolean);
      const all = [...ingress, ...external];
      return all.length > 0 ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(spec.externalName);
    default:
      return '<unknown>';
  }
}

function portsString(ports: unknown): string {
  const items = list(ports).map(obj);
  if (items.length === 0) return '<none>';
  return items
    .map((p) => {
      const protocol = str(p.protocol) || 'TCP';
      return p.nodePort ? `${int(p.port)}:${int(p.nodePort)}/${protocol}` : `${int(p.port)}/${protocol}`;
    })
    .join(',');
}

function nodeStatus(o: KubeObject): string {
  const ready = list(obj(o.status).conditions)
    .map(obj)
    .find((c) => c.type === 'Ready');
  let status = !ready ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady';
  if (obj(o.spec).unschedulable === true) status += ',SchedulingDisabled';
  return status;
}

function nodeRoles(labels: Record<string, string> | undefined): string {
  const roles = Object.keys(labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter(Boolean)
    .sort();
  return roles.length > 0 ? roles.join(',') : '<none>';
}

function mapString(value: unknown): string {
  const entries = Object.entries(obj(value))
    .map(([k, v]) => `${k}=${str(v)}`)
    .sort();
  return entries.length > 0 ? entries.join(',') : '<none>';
}

function quantity(value: unknown): string {
  return value === undefined || value === null ? '<unknown>' : jsonText(value);
}

function obj(value: unknown): Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

function str(value: unknown): string {
  return typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : '';
}

function int(value: unknown, fallback = 0): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  return fallback;
}
