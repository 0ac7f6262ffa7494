import { DO_NOT_DISRUPT } from '../../kube/manifests/index.js';
import { CHECK_IDS, type PreflightCheck } from '../types.js';
import { deploymentRef, loadDeployment, objectEvidence, podTemplateOf } from '../workload.js';

const [ANNOTATION, VALUE] = Object.entries(DO_NOT_DISRUPT)[0] as [string, string];

/**
 * Item 7: the Pod template carries `karpenter.sh/do-not-disrupt: "true"`, so Karpenter's consolidation does not
 * drain a node while its replica serves. A warn: serving works without it, but is interrupted now and then.
 */
export const karpenterDoNotDisrupt: PreflightCheck = {
  id: CHECK_IDS.karpenterDoNotDisrupt,
  item: 7,
  title: 'Karpenter do-not-disrupt annotation',
  async run(context) {
    const template = podTemplateOf(await loadDeployment(context));
    const value = template.annotations[ANNOTATION];
    const evidence = [objectEvidence(deploymentRef(context), true, { annotation: ANNOTATION, value: value ?? null })];
    if (value === VALUE) {
      return { status: 'pass', reason: `the Pod template has ${ANNOTATION}: "${VALUE}"`, evidence };
    }
    return {
      status: 'warn',
      reason:
        value === undefined
          ? `the Pod template has no ${ANNOTATION} annotation: Karpenter consolidation may evict a serving replica`
          : `the Pod template has ${ANNOTATION}: ${JSON.stringify(value)}, not "${VALUE}": Karpenter consolidation may evict a serving replica`,
      evidence,
      fix: `kubectl -n ${context.target.namespace} patch deployment ${context.target.deployment} --type merge -p '{"spec":{"template":{"metadata":{"annotations":{"${ANNOTATION}":"${VALUE}"}}}}}'`,
    };
  },
};
