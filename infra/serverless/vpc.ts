/**
 * The stage parameters `vpc.subnetIds` and `vpc.securityGroupIds`: where the functions that call the Kubernetes API
 * run when the cluster's API endpoint is private (docs/deploy.md, "Private clusters"). Both given, or neither.
 */
import * as z from 'zod';
import { formatPath } from '../../shared/config/index.js';
import type { StackSettingsIssue } from './errors.js';

/** The subnets and security groups of the in-VPC functions (Lambda's VpcConfig). */
export interface VpcSettings {
  subnetIds: string[];
  securityGroupIds: string[];
}

/** The ids AWS issues: a prefix and 8 (older resources) or 17 lower-case hex digits (EC2 API Reference). */
const SUBNET_ID = /^subnet-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;
const SECURITY_GROUP_ID = /^sg-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;

/**
 * Lambda's limits on VpcConfig (Lambda API Reference, VpcConfig: at most 16 subnets, at most 5 security groups).
 *
 * At least one subnet is required, two are recommended. Lambda accepts one, so one is accepted here too, with a
 * warning at package time: a single subnet is one Availability Zone, and when that zone fails preflight, drift
 * detection and calibration cannot reach the cluster. Refusing it would block a cheap test stage in one zone for a
 * risk its owner may accept; the warning says what the risk is.
 */
const LIMITS = { subnets: 16, securityGroups: 5, recommendedSubnets: 2 } as const;

/**
 * A list parameter as a stage may write it: a YAML list, a JSON array (`["subnet-...","subnet-..."]`), or
 * comma-separated ids (`--param="vpc.subnetIds=subnet-...,subnet-..."`, as osls passes one string). Empty or absent:
 * no list. Empty items are kept, so `subnet-a,,subnet-b` is refused naming the empty one rather than read as two.
 */
function splitList(value: unknown): unknown {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text === '') return [];
  if (text.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return value; // not an array: refused below as "must be a list"
    }
  }
  return text.split(',').map((item) => item.trim());
}

function idList(kind: { what: string; pattern: RegExp; accepted: string; max: number }) {
  return z.preprocess(
    splitList,
    z
      .array(
        z
          .string({
            error: (issue) => `${JSON.stringify(issue.input)} is not a ${kind.what}; accepted: ${kind.accepted}`,
          })
          .regex(kind.pattern, {
            error: (issue) => `${JSON.stringify(issue.input)} is not a ${kind.what}; accepted: ${kind.accepted}`,
          }),
        { error: `must be a list of ${kind.what}s: comma-separated, or a JSON array; accepted: ${kind.accepted}` },
      )
      .max(kind.max, { error: `has more than ${kind.max} ${kind.what}s, the most Lambda accepts` })
      .superRefine((ids, ctx) => {
        ids.forEach((id, index) => {
          if (ids.indexOf(id) !== index)
            ctx.addIssue({
              code: 'custom',
              path: [index],
              message: `${JSON.stringify(id)} is given twice; accepted: each ${kind.what} once`,
            });
        });
      }),
  );
}

const vpcSchema = z.strictObject(
  {
    subnetIds: idList({
      what: 'subnet id',
      pattern: SUBNET_ID,
      accepted: 'subnet- and 8 or 17 hex digits, e.g. subnet-0a1b2c3d4e5f67890',
      max: LIMITS.subnets,
    }),
    securityGroupIds: idList({
      what: 'security group id',
      pattern: SECURITY_GROUP_ID,
      accepted: 'sg- and 8 or 17 hex digits, e.g. sg-0a1b2c3d4e5f67890',
      max: LIMITS.securityGroups,
    }),
  },
  { error: 'must be an object with subnetIds and securityGroupIds' },
);

/**
 * Parses the `vpc` stage parameters: undefined when neither is given (the functions run outside any VPC), the
 * lists when both are; every problem goes to `issues` (named `vpc.subnetIds[1]`, ...), advice to `warnings`.
 */
export function parseVpcSettings(
  input: unknown,
  issues: StackSettingsIssue[],
  warnings: string[],
): VpcSettings | undefined {
  const parsed = vpcSchema.safeParse(input ?? {});
  if (!parsed.success) {
    issues.push(
      ...parsed.error.issues.map((issue) => ({ path: formatPath('vpc', issue.path), message: issue.message })),
    );
    return undefined;
  }
  const { subnetIds, securityGroupIds } = parsed.data;
  if (subnetIds.length === 0 && securityGroupIds.length === 0) return undefined;
  // Lambda needs both: subnets without a security group (or the reverse) is an incomplete VpcConfig.
  if (securityGroupIds.length === 0) {
    issues.push({
      path: 'vpc.securityGroupIds',
      message:
        'is required with vpc.subnetIds: the security groups of the in-VPC functions (sg-...); accepted: both or neither',
    });
    return undefined;
  }
  if (subnetIds.length === 0) {
    issues.push({
      path: 'vpc.subnetIds',
      message:
        'is required with vpc.securityGroupIds: the subnets of the in-VPC functions (subnet-...); accepted: both or neither',
    });
    return undefined;
  }
  if (subnetIds.length < LIMITS.recommendedSubnets)
    warnings.push(
      `vpc.subnetIds names one subnet (${subnetIds[0]}): the in-VPC functions then run in one Availability Zone; ` +
        `name subnets in at least ${LIMITS.recommendedSubnets} zones so that a zone outage does not stop them`,
    );
  return { subnetIds, securityGroupIds };
}
