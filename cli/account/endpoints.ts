import * as z from 'zod';
import { ConfigInvalidError, httpUrl, toConfigIssues } from '../../shared/config/index.js';

/**
 * Endpoint overrides, read from the environment under the names the functions take (a VPC endpoint, or the local
 * twin): `EKS_ENDPOINT`, `DYNAMODB_ENDPOINT`, `AMP_CONTROL_PLANE_ENDPOINT`. Unset: AWS's public endpoints.
 */
export interface AccountEndpoints {
  eks?: string;
  dynamodb?: string;
  ampControlPlane?: string;
}

const schema = z.object({
  EKS_ENDPOINT: httpUrl('the EKS endpoint override').optional(),
  DYNAMODB_ENDPOINT: httpUrl('the DynamoDB endpoint override').optional(),
  AMP_CONTROL_PLANE_ENDPOINT: httpUrl(
    "the AMP control-plane endpoint override (aps.<region>.amazonaws.com's)",
  ).optional(),
});

/** The overrides set in `env` (an empty variable counts as unset); a bad one fails naming the variable. */
export function endpointsFromEnvironment(env: Readonly<Record<string, string | undefined>>): AccountEndpoints {
  const given = Object.fromEntries(
    Object.keys(schema.shape)
      .map((key) => [key, env[key]] as const)
      .filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = schema.safeParse(given);
  if (!parsed.success) throw new ConfigInvalidError('environment', toConfigIssues('', parsed.error.issues));
  const vars = parsed.data;
  return {
    ...(vars.EKS_ENDPOINT === undefined ? {} : { eks: vars.EKS_ENDPOINT }),
    ...(vars.DYNAMODB_ENDPOINT === undefined ? {} : { dynamodb: vars.DYNAMODB_ENDPOINT }),
    ...(vars.AMP_CONTROL_PLANE_ENDPOINT === undefined ? {} : { ampControlPlane: vars.AMP_CONTROL_PLANE_ENDPOINT }),
  };
}
