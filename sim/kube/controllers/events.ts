import { randomBytes } from 'node:crypto';
import type { Clock } from '../../../shared/clock/index.js';
import type { KubeObject, ObjectStore } from '../types.js';
import { kubeTime } from './meta.js';

/** Event types, as Kubernetes has them. */
export const EVENT_TYPES = { normal: 'Normal', warning: 'Warning' } as const;
export type EventType = (typeof EVENT_TYPES)[keyof typeof EVENT_TYPES];

/** Records core/v1 Events about objects, as the controllers, the scheduler and the kubelet do. */
export class EventRecorder {
  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
    private readonly log: (line: string) => void,
  ) {}

  /** Records one event; best effort, as in Kubernetes (a failed event write never fails the controller). */
  record(object: KubeObject, type: EventType, reason: string, message: string, component: string): void {
    const now = kubeTime(this.clock.now());
    const namespace = object.metadata.namespace ?? 'default';
    try {
      this.store.create({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${object.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
        involvedObject: {
          apiVersion: object.apiVersion,
          kind: object.kind,
          name: object.metadata.name,
          ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
          ...(object.metadata.uid ? { uid: object.metadata.uid } : {}),
          ...(object.metadata.resourceVersion ? { resourceVersion: object.metadata.resourceVersion } : {}),
        },
        reason,
        message,
        type,
        source: { component },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        reportingComponent: component,
        reportingInstance: component,
      });
    } catch (error) {
      // The namespace may be going away with the object: the event is simply lost, as on a real cluster.
      this.log(`event ${reason} for ${object.kind} ${object.metadata.name} not recorded: ${(error as Error).message}`);
    }
  }
}
