import type { EksIdentity } from './eksToken.js';
import { EksAccessEntryInvalidError } from './errors.js';

/**
 * The cluster's EKS access entries, as CreateAccessEntry keeps them: an IAM principal, the Kubernetes username it
 * authenticates as and the Kubernetes groups RBAC binds (`kubernetesGroups`), plus whether the
 * AmazonEKSClusterAdminPolicy is associated (the cluster creator's entry). The twin's API server looks the caller of an
 * EKS token up here, as EKS does after STS answers with the caller's ARN.
 *
 * Where the twin differs: STS would say which role signed the token; the twin's tokens carry only the access key id
 * (sim/kube/server/eksToken.ts), so the twin keeps the key → role pairs its IAM handed out (`assumeRole`).
 */

/** One access entry, as DescribeAccessEntry shows it. */
export interface AccessEntry {
  principalArn: string;
  /** The Kubernetes user; default for a role, EKS's `arn:aws:sts::<account>:assumed-role/<role>/{{SessionName}}`. */
  username: string;
  kubernetesGroups: readonly string[];
  /** AmazonEKSClusterAdminPolicy associated at cluster scope: every request allowed, RBAC not consulted. */
  clusterAdmin: boolean;
}

/** CreateAccessEntry's fields that the twin honours. */
export interface AccessEntryInput {
  principalArn: string;
  kubernetesGroups?: readonly string[];
  username?: string;
  clusterAdmin?: boolean;
}

/** Who an EKS token's caller is in Kubernetes: the entry's user and groups. */
export interface ResolvedIdentity {
  username: string;
  groups: readonly string[];
  clusterAdmin: boolean;
  principalArn: string;
}

/** An IAM role ARN (the principals the product's functions are). */
const ROLE_ARN = /^arn:aws:iam::(\d{12}):role\/(?:[\w+=,.@-]+\/)*([\w+=,.@-]{1,64})$/;
/** EKS refuses groups and usernames in these namespaces (they are Kubernetes' and EKS's own). */
const RESERVED_GROUP_PREFIX = 'system:';
const RESERVED_USERNAME_PREFIXES = ['system:', 'eks:', 'aws:', 'amazon:', 'iam:'];

export class EksAccessEntries {
  readonly #entries = new Map<string, AccessEntry>();
  readonly #roleOfKey = new Map<string, string>();

  /** Adds an entry as CreateAccessEntry does; EksAccessEntryInvalidError for what EKS would refuse. */
  create(input: AccessEntryInput): AccessEntry {
    const match = ROLE_ARN.exec(input.principalArn);
    if (match === null)
      throw new EksAccessEntryInvalidError(
        'principalArn',
        `${JSON.stringify(input.principalArn)} is not an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>)`,
      );
    if (this.#entries.has(input.principalArn))
      throw new EksAccessEntryInvalidError('principalArn', `an access entry for ${input.principalArn} already exists`);
    const groups = [...(input.kubernetesGroups ?? [])];
    const reserved = groups.find((group) => group.startsWith(RESERVED_GROUP_PREFIX) || group === '');
    if (reserved !== undefined)
      throw new EksAccessEntryInvalidError(
        'kubernetesGroups',
        `${JSON.stringify(reserved)} is empty or starts with "${RESERVED_GROUP_PREFIX}", which EKS refuses`,
      );
    const username = input.username ?? `arn:aws:sts::${match[1]}:assumed-role/${match[2]}/{{SessionName}}`;
    const badPrefix = RESERVED_USERNAME_PREFIXES.find((prefix) => username.startsWith(prefix));
    if (badPrefix !== undefined)
      throw new EksAccessEntryInvalidError('username', `must not start with "${badPrefix}" (reserved by EKS)`);
    const entry: AccessEntry = {
      principalArn: input.principalArn,
      username,
      kubernetesGroups: groups,
      clusterAdmin: input.clusterAdmin ?? false,
    };
    this.#entries.set(entry.principalArn, entry);
    return entry;
  }

  /** The twin's IAM: the access key `accessKeyId` is a session of `roleArn` (what STS would answer for it). */
  assumeRole(accessKeyId: string, roleArn: string): void {
    this.#roleOfKey.set(accessKeyId, roleArn);
  }

  /** Every entry, in the order they were created (ListAccessEntries). */
  list(): AccessEntry[] {
    return [...this.#entries.values()];
  }

  /** The entry of a principal, or undefined. */
  describe(principalArn: string): AccessEntry | undefined {
    return this.#entries.get(principalArn);
  }

  /**
   * The Kubernetes identity of an EKS token's caller: the role its key belongs to, that role's entry, the username
   * with `{{SessionName}}` filled in (the twin's session name is the access key id). Undefined without an entry.
   */
  resolve(identity: EksIdentity): ResolvedIdentity | undefined {
    const roleArn = this.#roleOfKey.get(identity.accessKeyId);
    const entry = roleArn === undefined ? undefined : this.#entries.get(roleArn);
    if (entry === undefined) return undefined;
    return {
      username: entry.username.replaceAll('{{SessionName}}', identity.accessKeyId),
      groups: entry.kubernetesGroups,
      clusterAdmin: entry.clusterAdmin,
      principalArn: entry.principalArn,
    };
  }
}
