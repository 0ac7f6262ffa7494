import { createHash } from 'node:crypto';
import { ampAlertManagerDefinition, ampRuleGroupsNamespaceData } from '../export/index.js';
import type { AlertTarget } from '../rules/index.js';
import type { AmpAlertingResource } from './AmpAlertingControlPlane.js';

/** What the AMP engine installs in a workspace: one rule groups namespace and the Alertmanager definition. */
export interface DesiredAmpAlerting {
  ruleGroupsNamespace: { resource: AmpAlertingResource & { kind: 'ruleGroupsNamespace' }; data: string };
  alertManagerDefinition: { resource: AmpAlertingResource & { kind: 'alertManagerDefinition' }; data: string };
}

export interface DesiredAmpAlertingOptions {
  /** The targets with their alert settings (the evaluator's TARGETS): one rule group each. */
  targets: readonly AlertTarget[];
  /** The rule groups namespace (one per stage: `<service>-<stage>`). */
  namespace: string;
  /** The alerts topic AMP's Alertmanager publishes to. */
  topicArn: string;
  /** The topic's region (`sigv4.region`). */
  topicRegion: string;
}

/**
 * The rule groups and the Alertmanager definition for `options`, from the one rule source (shared/alerts/export):
 * the same per-target groups `vllm-pilot alerts rules --format amp --targets` writes, and the definition routing to
 * the alerts topic. AMP's Alertmanager has one route, so it repeats at the shortest `repeatInterval` any target asks
 * for (no target hears less often than it asked). Throws AlertExportInvalidError on a name AMP would refuse.
 */
export function desiredAmpAlerting(options: DesiredAmpAlertingOptions): DesiredAmpAlerting {
  const repeats = options.targets.map(({ settings }) => settings.repeatIntervalSeconds);
  return {
    ruleGroupsNamespace: {
      resource: { kind: 'ruleGroupsNamespace', name: options.namespace },
      data: ampRuleGroupsNamespaceData({ targets: options.targets, namespace: options.namespace }),
    },
    alertManagerDefinition: {
      resource: { kind: 'alertManagerDefinition' },
      data: ampAlertManagerDefinition({
        topicArn: options.topicArn,
        region: options.topicRegion,
        ...(repeats.length === 0 ? {} : { repeatIntervalSeconds: Math.min(...repeats) }),
      }),
    },
  };
}

/** A short digest of a desired text: the stack puts it in the custom resource's properties so a change triggers an update. */
export function ampDataDigest(data: string): string {
  return createHash('sha256').update(data, 'utf8').digest('hex');
}
