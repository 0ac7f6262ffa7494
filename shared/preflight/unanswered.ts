import { describeNoAnswer, findNoAnswer, type NoAnswer } from '../network/index.js';

/** Where docs/deploy.md explains the VPC endpoints and the cluster security group rule. */
export const PRIVATE_CLUSTERS_DOC = 'docs/deploy.md#private-clusters';

/** An AWS service's regional host: `eks.eu-west-1.amazonaws.com` (`.com.cn` in China), optionally with a port. */
const AWS_SERVICE_HOST = /^([a-z0-9-]+)\.([a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com(\.cn)?(?::\d+)?$/;
/** The services reached through a gateway endpoint (route table entries), not an interface endpoint. */
const GATEWAY_SERVICES: ReadonlySet<string> = new Set(['dynamodb', 's3']);

/** A check that could not look because a request got no answer: one line naming the host, the wait, and the fix. */
export interface UnansweredOutcome {
  reason: string;
  fix: string;
}

/**
 * When `error` (a check's) is a request that got no answer, what to say: the host, how long it waited, and what a
 * function in a VPC needs to reach it (the cluster security group rule for the cluster's API endpoint, the VPC
 * endpoint for an AWS service). `elapsedMs` is the check's own wait, used when no error in the chain states one.
 * Undefined for any other error.
 */
export function unansweredOutcome(error: unknown, elapsedMs?: number): UnansweredOutcome | undefined {
  const noAnswer = findNoAnswer(error);
  if (noAnswer === undefined) return undefined;
  // A check's own wait is a fallback, and only a positive one (a virtual clock in a unit test does not move).
  const waited = noAnswer.waitedMs ?? (elapsedMs !== undefined && elapsedMs > 0 ? elapsedMs : undefined);
  const what = describeNoAnswer(noAnswer.kind, waited);
  if (isClusterApi(error)) {
    const fix = `allow 443 from the functions' security group in the cluster security group (${PRIVATE_CLUSTERS_DOC})`;
    const endpoint = noAnswer.host === undefined ? '' : ` (${noAnswer.host})`;
    return { reason: `the cluster's API endpoint${endpoint} ${what}: ${fix}`, fix };
  }
  const fix = fixFor(noAnswer);
  return { reason: `${noAnswer.host ?? 'an endpoint'} ${what}: ${fix}`, fix };
}

/**
 * The Kubernetes client got no answer from the API server itself: its errors are KubeErrors, and the one naming a
 * failed cluster lookup (eks:DescribeCluster, an AWS call) is KubeClusterLookupError.
 */
function isClusterApi(error: unknown): boolean {
  return error instanceof Error && error.name === 'KubeUnavailableError';
}

function fixFor(noAnswer: NoAnswer): string {
  const aws = noAnswer.host === undefined ? null : AWS_SERVICE_HOST.exec(noAnswer.host);
  if (aws === null)
    return 'check that the endpoint is right and that the function can reach it (its VPC, security groups and routes)';
  const [, service = '', region = '', china] = aws;
  const name = `${china === undefined ? '' : 'cn.'}com.amazonaws.${region}.${service}`;
  const type = GATEWAY_SERVICES.has(service) ? 'gateway' : 'interface';
  return `a function in a VPC without internet access needs the ${type} endpoint ${name} (${PRIVATE_CLUSTERS_DOC})`;
}
