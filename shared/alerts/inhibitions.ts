import type { AlertName } from './types.js';

/**
 * Inhibition (Alertmanager's `inhibit_rules`): while a critical alert fires, the warnings it explains on the same Pod
 * are not notified. One table for both engines: the AMP Alertmanager definition carries it as `inhibit_rules`
 * (`export/ampAlertManagerDefinition.ts`), the Lambda engine's decision stage applies it the same way (`decide.ts`),
 * and the promtool tests check it against the alerts the exported rules produce (`export/promtoolTests.ts`). The
 * registry (`rules/registry.ts`) checks the table against the rules when it loads.
 */
export interface AlertInhibition {
  /** The alert that explains the others (Alertmanager's `source_matchers`). */
  source: AlertName;
  /** The alerts it mutes while it fires (`target_matchers`). */
  targets: readonly AlertName[];
  /**
   * Labels that must hold the same value on both (`equal`; a label missing on both counts as equal, as in
   * Alertmanager). `target` keeps a Pod of one target from muting a same-named Pod of another cluster in a shared
   * workspace; the generic rules carry no `target` label, so there it is equal on both.
   */
  equal: readonly string[];
  /** Why the source explains the targets (docs, logs). */
  why: string;
}

/** The inhibitions, both engines'. */
export const ALERT_INHIBITIONS: readonly AlertInhibition[] = Object.freeze([
  Object.freeze({
    source: 'VLLMKVCacheFull',
    targets: Object.freeze(['VLLMKVCacheHigh', 'VLLMPreemptionSpike'] as const),
    equal: Object.freeze(['target', 'namespace', 'pod']),
    why: 'a full KV cache explains both on its Pod: the 80 % warning is its early sign, preemptions its consequence',
  }),
]);

/** Alertmanager's `equal`: each label has the same value on both label sets (missing counts as empty). */
export function equalOn(
  labels: readonly string[],
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): boolean {
  return labels.every((name) => (a[name] ?? '') === (b[name] ?? ''));
}

/** A firing alert, as inhibition sees it. */
export interface FiringAlert {
  alertname: AlertName;
  labels: Readonly<Record<string, string>>;
  fingerprint: string;
}

/**
 * The firing alert among `firing` that inhibits an alert `alertname` with `labels`, with the inhibition, or undefined
 * (Alertmanager's `Inhibitor.Mutes`).
 */
export function inhibitorOf(
  alertname: AlertName,
  labels: Readonly<Record<string, string>>,
  firing: readonly FiringAlert[],
): { inhibition: AlertInhibition; source: FiringAlert } | undefined {
  for (const inhibition of ALERT_INHIBITIONS) {
    if (!inhibition.targets.includes(alertname)) continue;
    const source = firing.find((a) => a.alertname === inhibition.source && equalOn(inhibition.equal, a.labels, labels));
    if (source !== undefined) return { inhibition, source };
  }
  return undefined;
}
