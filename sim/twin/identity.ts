import { createHash, randomInt, randomUUID } from 'node:crypto';
import type { Profile } from '../profile/profile.js';
import type { ReplicaIdentity } from '../vllm/telemetry.js';

/** The alphabet Kubernetes uses for generated name suffixes (no vowels, no look-alike characters). */
const K8S_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A random Kubernetes-style suffix of `length` characters. */
export function randomSuffix(length: number): string {
  return Array.from({ length }, () => K8S_ALPHABET[randomInt(K8S_ALPHABET.length)]).join('');
}

/** A stable pod-template-hash for a profile: the same spec gives the same ReplicaSet name, as in Kubernetes. */
export function podTemplateHash(profile: Profile): string {
  const digest = createHash('sha256')
    .update(JSON.stringify({ engine: profile.engine, model: profile.model }))
    .digest();
  return Array.from(digest.subarray(0, 10), (b) => K8S_ALPHABET[b % K8S_ALPHABET.length]).join('');
}

/** The identity of replica `index`: a Pod of the profile's Deployment on its own GPU node. */
export function replicaIdentity(profile: Profile, index: number, region: string): ReplicaIdentity {
  return {
    pod: `${profile.deployment}-${podTemplateHash(profile)}-${randomSuffix(5)}`,
    namespace: profile.namespace,
    deployment: profile.deployment,
    container: 'vllm',
    node: `ip-10-0-${16 + index}-${randomInt(2, 250)}.${region}.compute.internal`,
    gpuIndex: 0,
    gpuUuid: `GPU-${randomUUID()}`,
    // One GPU per g6e.4xlarge node, always at the same slot.
    pciBusId: '00000000:30:00.0',
  };
}
