import { createHash } from 'node:crypto';
import type { CalibrationInput } from './input.js';

/**
 * Which Deployment a calibration loads and measures: the target, or in deploy.mode shadow its copy
 * (workflow/shadow.ts, ADR 0017), named from the target alone so every step and every cleanup finds it.
 */

/**
 * The longest Deployment name whose Pods' names stay within 63 characters: the ReplicaSet adds `-<hash>` (up to 10)
 * and the Pod `-<suffix>` (5), so the Pod matcher of shared/metrics finds them by the Deployment's full name.
 */
const MAX_DEPLOYMENT_NAME = 47;
const SUFFIX = '-shadow';

/** The copy's name (Deployment and Service): `<deployment>-shadow`, or a shortened name with a hash when too long. */
export function shadowDeploymentName(deployment: string): string {
  const plain = `${deployment}${SUFFIX}`;
  if (plain.length <= MAX_DEPLOYMENT_NAME) return plain;
  const hash = createHash('sha256').update(deployment).digest('hex').slice(0, 6);
  const head = deployment.slice(0, MAX_DEPLOYMENT_NAME - SUFFIX.length - hash.length - 1).replace(/-+$/, '');
  return `${head}-${hash}${SUFFIX}`;
}

/** The Deployment whose Pods the calibration loads and measures: the copy in shadow mode, else the target. */
export function measuredDeployment(input: CalibrationInput): string {
  return input.deploy.mode === 'shadow' ? shadowDeploymentName(input.target.deployment) : input.target.deployment;
}
