import { KEDA_KINDS } from '../../keda/index.js';
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
 * names), and KEDA reports it Ready (condition Ready=True: its triggers and scale target resolve).
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
    return {
      status: 'pass',
      reason: `ScaledObject ${good.so.metadata.name} targets Deployment ${target.deployment} and is Ready`,
      evidence,
    };
  },
};

function targetsDeployment(so: KubeObject, deployment: string): boolean {
  const ref = (so as ScaledObjectShape).spec?.scaleTargetRef;
  return ref?.name === deployment && (ref.kind === undefined || ref.kind === 'Deployment');
}

function refOf(so: KubeObject): ObjectRef {
  return { ...KEDA_KINDS.scaledObject, namespace: so.metadata.namespace ?? '', name: so.metadata.name };
}
