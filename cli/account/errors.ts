/**
 * The mistakes a platform engineer makes on day one, pointing the CLI at their own account: each a named error whose
 * one-line message says the cause and the fix. cli/main.ts prints it as the only line on stderr.
 */

/** The AWS SDK's default chain found no credentials (no environment keys, no profile, no SSO, no instance role). */
export class AwsCredentialsMissingError extends Error {
  override readonly name = 'AwsCredentialsMissingError';

  constructor(options?: ErrorOptions) {
    super(
      'no AWS credentials found (environment, AWS_PROFILE, SSO or an instance role): run `aws configure sso` once, ' +
        '`aws sso login --profile <name>`, then set AWS_PROFILE=<name> (or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)',
      options,
    );
  }
}

/** The profile uses IAM Identity Center (SSO) and its cached session has expired or was never started. */
export class AwsSsoSessionExpiredError extends Error {
  override readonly name = 'AwsSsoSessionExpiredError';

  constructor(
    readonly profile: string,
    options?: ErrorOptions,
  ) {
    super(
      `the SSO session of profile ${profile} has expired (or was never started): run \`aws sso login --profile ${profile}\`, then try again`,
      options,
    );
  }
}

/** The credentials could not be resolved for another reason (a broken profile, a failing credential_process). */
export class AwsCredentialsUnusableError extends Error {
  override readonly name = 'AwsCredentialsUnusableError';

  constructor(reason: string, options?: ErrorOptions) {
    super(
      `the AWS credentials could not be loaded: ${reason}; check AWS_PROFILE and ~/.aws/config (aws sts get-caller-identity shows what the CLI would use)`,
      options,
    );
  }
}

/** The cluster's API server never answered: a private endpoint seen from outside its VPC, or a firewall. */
export class ClusterUnreachableError extends Error {
  override readonly name = 'ClusterUnreachableError';

  constructor(cluster: string, region: string, detail: string, options?: ErrorOptions) {
    super(
      `cluster ${cluster} (${region}) cannot be reached: ${detail}; a private API endpoint answers only inside its VPC: ` +
        'run from a host there (VPN, bastion, SSM session) or give --kubeconfig/--context with a context that reaches it',
      options,
    );
  }
}

/** The API server refused the caller's EKS token (401): the IAM identity has no access entry in the cluster. */
export class ClusterAccessDeniedError extends Error {
  override readonly name = 'ClusterAccessDeniedError';

  constructor(cluster: string, region: string, options?: ErrorOptions) {
    super(
      `cluster ${cluster} (${region}) refused your IAM identity (401 Unauthorized): it has no access entry there; ` +
        `aws eks create-access-entry --cluster-name ${cluster} --region ${region} --principal-arn <your role ARN, from aws sts get-caller-identity>, ` +
        'then associate AmazonEKSViewPolicy with it (docs/cli.md, "Against your account")',
      options,
    );
  }
}

/** The identity is known to the cluster but may not read what the command needs (403, RBAC). */
export class ClusterReadForbiddenError extends Error {
  override readonly name = 'ClusterReadForbiddenError';

  constructor(cluster: string, serverMessage: string, options?: ErrorOptions) {
    super(
      `cluster ${cluster} lets your identity in but not read what preflight needs: ${serverMessage}; associate ` +
        'AmazonEKSViewPolicy with your access entry, or map it to the group vllm-eks-pilot-read (infra/kubernetes/control-plane-rbac.yaml)',
      options,
    );
  }
}

/** DescribeWorkspace found no such workspace in the region asked (it lives in another region, or the id is wrong). */
export class AmpWorkspaceNotFoundError extends Error {
  override readonly name = 'AmpWorkspaceNotFoundError';

  constructor(workspaceId: string, region: string, reason: string, options?: ErrorOptions) {
    super(
      `AMP workspace ${workspaceId} was not found in ${region} (${reason}): it is in another region or the id is wrong; ` +
        `give --amp-region with its region (aws amp list-workspaces --region <region>) or its URL as --amp-workspace`,
      options,
    );
  }
}

/** AMP holds no vLLM series of the target's model in its namespace; `known` are the model names it does hold there. */
export class ModelSeriesNotFoundError extends Error {
  override readonly name = 'ModelSeriesNotFoundError';

  constructor(model: string, namespace: string, known: readonly string[], options?: ErrorOptions) {
    super(
      known.length === 0
        ? `AMP holds no vLLM series in namespace ${namespace}: check that a ServiceMonitor scrapes the vLLM Pods and that ` +
            'the cluster remote-writes to this workspace (vllm-pilot preflight shows which step is missing)'
        : `no vLLM series for model ${JSON.stringify(model)} in namespace ${namespace}; AMP has ${known
            .map((name) => JSON.stringify(name))
            .join(', ')} there: give --model (or the target's model) as vLLM's --served-model-name`,
      options,
    );
  }
}

/** The history table does not exist in the region (no stack deployed there, or another stage's name). */
export class HistoryTableNotFoundError extends Error {
  override readonly name = 'HistoryTableNotFoundError';

  constructor(table: string, region: string, options?: ErrorOptions) {
    super(
      `--history-table ${table}: no such DynamoDB table in ${region}; give the stack's table ` +
        '(the output CalibrationHistoryTableName of aws cloudformation describe-stacks --stack-name vllm-eks-pilot-<stage>)',
      options,
    );
  }
}
