import { findTriggers, KEDA_KINDS, TRIGGER_METRIC_TYPES } from '../../keda/index.js';
import type { KubeObject, ObjectRef } from '../../kube/index.js';
import { CHECK_IDS, type Evidence, type PreflightCheck } from '../types.js';
import { listText, objectEvidence } from '../workload.js';

const KEDA_CRD: ObjectRef = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  name: 'scaledobjects.keda.sh',
};

interface ScaledObjectShape {
  spec?: { scaleTargetRef?: { name?: string; kind?: string } };
  status?: { conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }> };
}

/**
 * Item 6: KEDA is installed (its ScaledObject CRD), a ScaledObject targets the Deployment (or is the one the target
 * names), and KEDA reports it Ready (condition Ready=True: its triggers and scale target resolve). A warning when its
 * p95-latency trigger is read per Pod (`metricType: AverageValue`, the guide's): the HPA then asks for
 * ceil(p95 / threshold) Pods however many run, so the latency guardrail cannot scale past that
 * (TRIGGER_METRIC_TYPES in shared/keda/scaledObjectManifest.ts).
 */
export const kedaScaledObject: PreflightCheck = {
  id: CHECK_IDS.kedaScaledObject,
  item: 6,
  title: 'KEDA installed and ScaledObject applied',
  async run(context) {
    const { target } = context;
    const crd = await context.cluster.get(KEDA_CRD);
    if (crd === undefined) {
      return {
        status: 'fail',
        reason: 'KEDA not installed: no CustomResourceDefinition scaledobjects.keda.sh',
        evidence: [objectEvidence(KEDA_CRD, false)],
        fix: 'helm install keda kedacore/keda -n keda --create-namespace, then apply the ScaledObject (vllm-pilot render scaledobject | kubectl apply -f -)',
      };
    }
    const evidence: Evidence[] = [objectEvidence(KEDA_CRD, true)];
    const all = await context.cluster.list({ ...KEDA_KINDS.scaledObject, namespace: target.namespace });
    const chosen =
      target.scaledObject !== undefined
        ? all.filter((so) => so.metadata.name === target.scaledObject)
        : all.filter((so) => targetsDeployment(so, target.deployment));
    if (chosen.length === 0) {
      const wanted =
        target.scaledObject !== undefined
          ? `ScaledObject ${target.namespace}/${target.scaledObject} not found`
          : `no ScaledObject in namespace ${target.namespace} targets Deployment ${target.deployment} (${all.length} seen: ${all.map((so) => so.metadata.name).join(', ') || 'none'})`;
      evidence.push(
        objectEvidence(
          { ...KEDA_KINDS.scaledObject, namespace: target.namespace, name: target.scaledObject ?? target.deployment },
          false,
        ),
      );
      return {
        status: 'fail',
        reason: `${wanted}: nothing scales the Deployment on queue depth or latency`,
        evidence,
        fix: `Apply the ScaledObject: vllm-pilot render scaledobject --set deployment=${target.deployment} --set namespace=${target.namespace} | kubectl apply -f - (run a calibration to set its thresholds)`,
      };
    }
    const results = chosen.map((so) => {
      const ready = ((so as ScaledObjectShape).status?.conditions ?? []).find((c) => c.type === 'Ready');
      evidence.push(
        objectEvidence(refOf(so), true, {
          scaleTargetRef: (so as ScaledObjectShape).spec?.scaleTargetRef ?? null,
          ready: ready?.status ?? null,
          ...(ready?.message === undefined ? {} : { message: ready.message }),
        }),
      );
      return { so, ready };
    });
    const good = results.find((r) => r.ready?.status === 'True');
    if (good === undefined) {
      const text = results.map(
        (r) =>
          `${r.so.metadata.name} Ready=${r.ready?.status ?? 'unknown'}${r.ready?.message ? ` (${r.ready.message})` : ''}`,
      );
      return {
        status: 'fail',
        reason: `ScaledObject not Ready: ${listText(text)}`,
        evidence,
        fix: `kubectl -n ${target.namespace} describe scaledobject ${results[0]?.so.metadata.name ?? ''}: check the scale target, the TriggerAuthentication for AMP and the keda-operator logs`,
      };
    }
    const ready = `ScaledObject ${good.so.metadata.name} targets Deployment ${target.deployment} and is Ready`;
    const perPod = latencyReadPerPod(good.so);
    if (perPod !== undefined)
      return {
        status: 'warn',
        reason:
          `${ready}, but its p95-latency trigger (spec.triggers[${perPod.index}]) has metricType ${perPod.metricType}: ` +
          `the HPA divides the p95 by the threshold as if it were a per-Pod total and asks for ceil(p95 / ${perPod.threshold} s) ` +
          `Pods however many run (a p95 twice the threshold asks for 2 Pods, at 2 or at 8), so latency alone never scales ` +
          'past that',
        evidence,
        fix:
          `Set metricType: ${TRIGGER_METRIC_TYPES.p95Latency} on that trigger (desired = ready Pods × p95 / threshold): ` +
          'a calibration with scaledObject.apply sets it, or vllm-pilot render scaledobject renders it',
      };
    return { status: 'pass', reason: ready, evidence };
  },
};

/** The latency trigger, when the HPA reads it per Pod (AverageValue, also KEDA's default when left out). */
function latencyReadPerPod(so: KubeObject): { index: number; metricType: string; threshold: string } | undefined {
  let latency;
  try {
    latency = findTriggers(so).p95Latency;
  } catch {
    // A ScaledObject without the two triggers (scaling on something else) is the user's design: nothing to say here.
    return undefined;
  }
  const metricType = latency.metricType ?? 'AverageValue (the default)';
  if (latency.metricType === TRIGGER_METRIC_TYPES.p95Latency) return undefined;
  return { index: latency.index, metricType, threshold: latency.metadata.threshold ?? '?' };
}

function targetsDeployment(so: KubeObject, deployment: string): boolean {
  const ref = (so as ScaledObjectShape).spec?.scaleTargetRef;
  return ref?.name === deployment && (ref.kind === undefined || ref.kind === 'Deployment');
}

function refOf(so: KubeObject): ObjectRef {
  return { ...KEDA_KINDS.scaledObject, namespace: so.metadata.namespace ?? '', name: so.metadata.name };
}
