import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type * as z from 'zod';
import type { BasePorts, CalibrationFunction } from '../../shared/calibration/workflow/index.js';
import { systemClock } from '../../shared/clock/index.js';
import { lazyLambdaEntry } from '../shared/lambdaEntry.js';
import { loadCalibrationConfig, type CalibrationConfig } from './config.js';
import { bindStep } from './task.js';

/**
 * The Lambda entry of one calibration step (functions/calibration/<name>.ts): the configuration parsed and the
 * step's ports built once per container, then every invocation runs the bound step (bindStep).
 */
export function calibrationLambda<E extends z.ZodType, R, P extends BasePorts>(
  step: CalibrationFunction<E, R, P>,
  ports: (config: CalibrationConfig) => Omit<P, keyof BasePorts>,
): (event: unknown, context: Context) => Promise<unknown> {
  return lazyLambdaEntry('calibration', (env, logger) => {
    const config = loadCalibrationConfig(env);
    logger.info('configuration loaded', { step: step.name, region: config.region });
    const task = bindStep(step, { clock: systemClock, logger, ...ports(config) } as unknown as P);
    return middy((event: unknown) => task(event)).use(injectLambdaContext(logger, { resetKeys: true }));
  });
}
