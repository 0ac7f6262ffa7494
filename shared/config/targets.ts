import * as z from 'zod';
import { ConfigInvalidError, type ConfigIssue } from './errors.js';
import { toConfigIssues } from './zodIssues.js';

/**
 * A deployment this product watches. Its fields become PromQL label matchers (escaped) and CloudWatch dimensions.
 */
export interface Target {
  /** A short unique name for logs and results, e.g. `prod-ministral`. */
  name: string;
  /** EKS cluster name (a CloudWatch dimension; also a matcher when `clusterLabel` is set). */
  cluster: string;
  namespace: string;
  /** The vLLM Deployment; its Pods are named `<deployment>-<hash>-<suffix>`. */
  deployment: string;
  /** The `model_name` label (vLLM's `--served-model-name`). */
  model: string;
  /**
   * The label that carries the cluster name in a shared workspace (often `cluster`, set as an external label by
   * the Prometheus that remote-writes to AMP). When unset, series are not filtered by cluster.
   */
  clusterLabel?: string;
}

/**
 * Naming rules the target fields must follow, each with its source, so a bad value is refused here with a message
 * that names the field instead of failing later inside a PromQL query or a CloudWatch call.
 */
export const TARGET_NAME_RULES = {
  /** Our own rule: short and safe in logs, file names and CloudWatch dimension values. */
  name: {
    pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
    accepted: '1-128 characters: letters, digits, ".", "_", "-", starting with a letter or digit',
  },
  /** EKS CreateCluster `name`: alphanumerics, hyphens and underscores, starting with an alphanumeric, at most 100. */
  cluster: {
    pattern: /^[0-9A-Za-z][0-9A-Za-z_-]{0,99}$/,
    accepted: 'an EKS cluster name: 1-100 letters, digits, "-" or "_", starting with a letter or digit',
  },
  /** Kubernetes DNS-1123 label (namespaces, Deployment names): lower-case alphanumerics and "-", at most 63. */
  dns1123Label: {
    pattern: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
    accepted: 'a DNS-1123 label: 1-63 lower-case letters, digits or "-", starting and ending with a letter or digit',
  },
  /** Prometheus data model: `[a-zA-Z_][a-zA-Z0-9_]*`; names starting with `__` are reserved for internal use. */
  prometheusLabel: {
    pattern: /^(?!__)[a-zA-Z_][a-zA-Z0-9_]*$/,
    accepted: 'a Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__"',
  },
} as const;

function matching(rule: { pattern: RegExp; accepted: string }) {
  return z.string({ error: `must be a string; accepted: ${rule.accepted}` }).regex(rule.pattern, {
    error: (issue) => `${JSON.stringify(issue.input)} is not valid; accepted: ${rule.accepted}`,
  });
}

/** One target. Unknown keys are refused so that a typo (`namspace`) fails loudly instead of being ignored. */
export const targetSchema = z.strictObject({
  name: matching(TARGET_NAME_RULES.name),
  cluster: matching(TARGET_NAME_RULES.cluster),
  namespace: matching(TARGET_NAME_RULES.dns1123Label),
  deployment: matching(TARGET_NAME_RULES.dns1123Label),
  // Any characters: the PromQL builder escapes it. Model names often hold "/" and ".".
  model: z.string({ error: 'must be a string (the served model name)' }).min(1, { error: 'must not be empty' }),
  clusterLabel: matching(TARGET_NAME_RULES.prometheusLabel).optional(),
}) satisfies z.ZodType<Target>;

/** A non-empty list of targets of `item`'s shape whose names are unique (the issue names the duplicate's index). */
export function uniqueTargetList<T extends z.ZodType<{ name: string }>>(item: T) {
  return z
    .array(item, { error: 'must be a JSON array of targets' })
    .min(1, { error: 'must list at least one target' })
    .superRefine((targets, ctx) => {
      const firstIndex = new Map<string, number>();
      targets.forEach((target, index) => {
        const earlier = firstIndex.get(target.name);
        if (earlier === undefined) firstIndex.set(target.name, index);
        else
          ctx.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: `duplicate name ${JSON.stringify(target.name)} (also used by targets[${earlier}]); names must be unique`,
          });
      });
    });
}

/** A non-empty list of targets with unique names. */
export const targetsSchema = uniqueTargetList(targetSchema);

/**
 * Parses and validates a list of targets, given as JSON text or as an already-parsed value.
 * Throws `ConfigInvalidError` whose issues name the index and field (`targets[1].namespace: ...`).
 */
export function parseTargets(input: unknown): Target[] {
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (error) {
      const issue: ConfigIssue = {
        path: 'targets',
        message: `is not valid JSON (${error instanceof Error ? error.message : String(error)}); accepted: a JSON array of targets`,
      };
      throw new ConfigInvalidError('targets', [issue], { cause: error });
    }
  }
  const parsed = targetsSchema.safeParse(value);
  if (!parsed.success) throw new ConfigInvalidError('targets', toConfigIssues('targets', parsed.error.issues));
  return parsed.data;
}
