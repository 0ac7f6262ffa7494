/** A drift check of a target whose Deployment does not exist (a renamed Deployment, a wrong namespace). */
export class DriftDeploymentNotFoundError extends Error {
  constructor(
    readonly namespace: string,
    readonly deployment: string,
  ) {
    super(`Deployment ${namespace}/${deployment} not found: check the target's namespace and deployment`);
    this.name = 'DriftDeploymentNotFoundError';
  }
}
