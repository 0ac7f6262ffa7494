import {
  type IPrometheusRule,
  PrometheusRule,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { TARGET_NAME_RULES } from '../../config/index.js';
import type { KubeObject } from '../../kube/index.js';
import { AlertExportInvalidError } from '../errors.js';
import { alertRuleGroups, RULE_GROUP_NAME, type AlertExportOptions } from './ruleGroups.js';

/**
 * kube-prometheus-stack's Prometheus selects PrometheusRules by its Helm release label
 * (`ruleSelector.matchLabels.release: <release>`); `kube-prometheus-stack` is the release name its docs install.
 */
export const DEFAULT_PROMETHEUS_RULE_LABELS: Readonly<Record<string, string>> = Object.freeze({
  release: 'kube-prometheus-stack',
});

export interface PrometheusRuleManifestOptions extends AlertExportOptions {
  /** metadata.name (default `vllm-eks-pilot-alerts`). */
  name?: string;
  /** metadata.namespace (default `monitoring`, where kube-prometheus-stack usually runs). */
  namespace?: string;
  /** metadata.labels; replaces the default `release: kube-prometheus-stack` when given. */
  labels?: Record<string, string>;
}

/** Kubernetes object names (DNS-1123 subdomain): lower-case alphanumerics, "-" and ".", at most 253. */
const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The seven rules as a `monitoring.coreos.com/v1` PrometheusRule for the Prometheus Operator (kube-prometheus-stack),
 * validated against the CRD's schema. Apply it with `kubectl apply -f`. Throws `AlertExportInvalidError` for a bad
 * name, namespace or a manifest the schema refuses.
 */
export function prometheusRuleManifest(options: PrometheusRuleManifestOptions = {}): KubeObject {
  const name = options.name ?? RULE_GROUP_NAME;
  const namespace = options.namespace ?? 'monitoring';
  if (!DNS1123_SUBDOMAIN.test(name))
    throw new AlertExportInvalidError(
      'name',
      `${JSON.stringify(name)} is not valid; accepted: a DNS-1123 subdomain (lower-case letters, digits, "-" and ".", at most 253)`,
    );
  if (!TARGET_NAME_RULES.dns1123Label.pattern.test(namespace))
    throw new AlertExportInvalidError(
      'namespace',
      `${JSON.stringify(namespace)} is not valid; accepted: ${TARGET_NAME_RULES.dns1123Label.accepted}`,
    );
  const manifest: IPrometheusRule = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name, namespace, labels: { ...(options.labels ?? DEFAULT_PROMETHEUS_RULE_LABELS) } },
    spec: { groups: alertRuleGroups(options) },
  };
  try {
    new PrometheusRule(manifest).validate();
  } catch (error) {
    throw new AlertExportInvalidError('PrometheusRule', `the manifest is not valid: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return manifest as KubeObject;
}
