import * as z from 'zod';
import { ConfigInvalidError, httpUrl, REGION, toConfigIssues } from '../../shared/config/index.js';

/** The calibration functions' settings, read once per Lambda container from its environment. */
export interface CalibrationConfig {
  region: string;
  reportBucket: string;
  historyTable: string;
  /** The alert silences table: Deploy mutes the target's alerts, the cleanup unmutes them; unset: no muting. */
  silencesTable?: string;
  /** Set only for the local twin (or VPC endpoints). */
  s3Endpoint?: string;
  dynamodbEndpoint?: string;
  eksEndpoint?: string;
}

const environmentSchema = z.object({
  AWS_REGION: z
    .string({ error: 'is required (Lambda sets it): the region of S3, DynamoDB and EKS' })
    .regex(REGION, { error: 'must be an AWS region such as us-east-2' }),
  REPORT_BUCKET: z
    .string({ error: 'is required: the S3 bucket for the calibration reports' })
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { error: 'must be an S3 bucket name (3-63 a-z, 0-9, ".", "-")' }),
  HISTORY_TABLE: z
    .string({ error: 'is required: the DynamoDB table of the calibration history' })
    .regex(/^[A-Za-z0-9_.-]{3,255}$/, {
      error: 'must be a DynamoDB table name (3-255 letters, digits, "_", "-", ".")',
    }),
  ALERT_SILENCES_TABLE: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{3,255}$/, {
      error: 'must be a DynamoDB table name (3-255 letters, digits, "_", "-", ".")',
    })
    .optional(),
  S3_ENDPOINT: httpUrl('the S3 endpoint override').optional(),
  DYNAMODB_ENDPOINT: httpUrl('the DynamoDB endpoint override').optional(),
  EKS_ENDPOINT: httpUrl('the EKS endpoint override').optional(),
});

/** Reads the configuration; throws ConfigInvalidError naming every bad variable. An empty variable counts as unset. */
export function loadCalibrationConfig(env: Readonly<Record<string, string | undefined>>): CalibrationConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success) throw new ConfigInvalidError('environment', toConfigIssues('', parsed.error.issues));
  const vars = parsed.data;
  return {
    region: vars.AWS_REGION,
    reportBucket: vars.REPORT_BUCKET,
    historyTable: vars.HISTORY_TABLE,
    ...(vars.ALERT_SILENCES_TABLE === undefined ? {} : { silencesTable: vars.ALERT_SILENCES_TABLE }),
    ...(vars.S3_ENDPOINT === undefined ? {} : { s3Endpoint: vars.S3_ENDPOINT }),
    ...(vars.DYNAMODB_ENDPOINT === undefined ? {} : { dynamodbEndpoint: vars.DYNAMODB_ENDPOINT }),
    ...(vars.EKS_ENDPOINT === undefined ? {} : { eksEndpoint: vars.EKS_ENDPOINT }),
  };
}
