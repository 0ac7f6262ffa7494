import type { Clock } from '../../../shared/clock/index.js';
import type { KubeObject, ObjectStore } from '../types.js';

/** A core/v1 Event to record about an object. */
export interface EventNote {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

let sequence = 0;

/**
 * Records a core/v1 Event about `involved`, named `<name>.<hex nanoseconds>` as client-go's recorder names them, with
 * second-precision timestamps as in `kubectl describe`. Returns the error instead of throwing: an event that cannot
 * be stored must not stop a scaling decision (client-go drops such events too).
 */
export function recordEvent(
  store: ObjectStore,
  clock: Clock,
  involved: KubeObject,
  note: EventNote,
  component: string,
): Error | undefined {
  const nowMs = clock.now();
  sequence = (sequence + 1) % 1_000_000;
  const stamp = new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const nanos = BigInt(Math.floor(nowMs)) * 1_000_000n + BigInt(sequence);
  try {
    store.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: `${involved.metadata.name}.${nanos.toString(16)}`,
        ...(involved.metadata.namespace ? { namespace: involved.metadata.namespace } : {}),
      },
      involvedObject: {
        apiVersion: involved.apiVersion,
        kind: involved.kind,
        name: involved.metadata.name,
        ...(involved.metadata.namespace ? { namespace: involved.metadata.namespace } : {}),
        ...(involved.metadata.uid ? { uid: involved.metadata.uid } : {}),
        ...(involved.metadata.resourceVersion ? { resourceVersion: involved.metadata.resourceVersion } : {}),
      },
      reason: note.reason,
      message: note.message,
      type: note.type,
      source: { component },
      firstTimestamp: stamp,
      lastTimestamp: stamp,
      count: 1,
      reportingComponent: component,
      reportingInstance: '',
    });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
