import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EKSClient } from '@aws-sdk/client-eks';
import { S3Client } from '@aws-sdk/client-s3';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { DynamoDbHistoryStore } from '../../shared/calibration/history/DynamoDbHistoryStore.js';
import { systemClock } from '../../shared/clock/clock.js';
import { connectToEks } from '../../shared/kube/connectToEks.js';
import type { ClusterClient } from '../../shared/kube/types.js';
import { HttpMetricsSource } from '../../shared/metrics/ampClient.js';
import { S3ReportStore } from '../../shared/reports/S3ReportStore.js';
import { loadCalibrationConfig } from './config.js';
import type { CalibrationDeps, CalibrationTarget } from './deps.js';
import {
  CALIBRATION_FUNCTIONS,
  createCalibrationHandlers,
  type CalibrationFunctionName,
  type CalibrationHandlers,
} from './handlers.js';

/**
 * The Lambda entry points of the calibration: `handlers.<name>` for each function of CALIBRATION_FUNCTIONS (the
 * serverless handler string `functions/calibration/lambda.handlers.deploy`). Built on first use, not at import, so
 * that importing this module (tests, the CLI) needs no environment.
 */

/** The real adapters from the environment: EKS with its token, AMP over SigV4, S3, DynamoDB. */
export function depsFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): CalibrationDeps {
  const config = loadCalibrationConfig(env);
  const eks = new Map<string, EKSClient>();
  const clusters = new Map<string, Promise<ClusterClient>>();
  const sources = new Map<string, HttpMetricsSource>();
  logger.info('configuration loaded', { reportBucket: config.reportBucket, historyTable: config.historyTable });
  return {
    // One client per cluster for the life of the container: DescribeCluster once, tokens reused until near expiry.
    cluster(target: CalibrationTarget) {
      const key = `${target.region}/${target.cluster}`;
      let cluster = clusters.get(key);
      if (cluster === undefined) {
        let client = eks.get(target.region);
        if (client === undefined) {
          client = new EKSClient({
            region: target.region,
            ...(config.eksEndpoint === undefined ? {} : { endpoint: config.eksEndpoint }),
          });
          eks.set(target.region, client);
        }
        cluster = connectToEks({ clusterName: target.cluster, region: target.region, eks: client });
        clusters.set(key, cluster);
        cluster.catch(() => clusters.delete(key));
      }
      return cluster;
    },
    metricsSource(target: CalibrationTarget) {
      const key = `${target.region} ${target.ampWorkspaceUrl}`;
      let source = sources.get(key);
      if (source === undefined) {
        source = new HttpMetricsSource({ endpoint: target.ampWorkspaceUrl, region: target.region });
        sources.set(key, source);
      }
      return source;
    },
    reports: new S3ReportStore({
      client: new S3Client({
        region: config.region,
        ...(config.s3Endpoint === undefined ? {} : { endpoint: config.s3Endpoint, forcePathStyle: true }),
      }),
      bucket: config.reportBucket,
    }),
    history: new DynamoDbHistoryStore({
      client: new DynamoDBClient({
        region: config.region,
        ...(config.dynamodbEndpoint === undefined ? {} : { endpoint: config.dynamodbEndpoint }),
      }),
      tableName: config.historyTable,
    }),
    clock: systemClock,
    logger,
  };
}

type LambdaHandler = (event: unknown, context: Context) => Promise<unknown>;

const logger = new Logger({ serviceName: 'calibration' });
let built: CalibrationHandlers | undefined;

function fromEnvironment(): CalibrationHandlers {
  if (built === undefined) {
    try {
      built = createCalibrationHandlers(depsFromEnvironment(process.env, logger));
    } catch (error) {
      logger.error('configuration rejected', error as Error);
      throw error;
    }
  }
  return built;
}

function lambdaHandler(name: CalibrationFunctionName): LambdaHandler {
  const run = (event: unknown) => fromEnvironment()[name](event);
  return middy(run).use(injectLambdaContext(logger, { resetKeys: true }));
}

/** One Lambda handler per calibration function. */
export const handlers = Object.fromEntries(
  (Object.keys(CALIBRATION_FUNCTIONS) as CalibrationFunctionName[]).map((name) => [name, lambdaHandler(name)]),
) as Record<CalibrationFunctionName, LambdaHandler>;
