import type * as z from 'zod';
import type { CalibrationPorts } from './ports.js';

/**
 * One step of the calibration state machine: what its Task states call (`${<placeholder>}` in
 * statemachines/calibration.asl.json), the state slice it receives (its states' Parameters, parsed by `event`), and
 * the function of its ports and that slice that does the work. The Lambda entry (functions/calibration/<name>.ts)
 * and the local runner bind the same step to their ports.
 */
export interface CalibrationStep<E extends z.ZodType = z.ZodType, R = unknown, P = CalibrationPorts> {
  /** The function's name: its entry file functions/calibration/<name>.ts and its Lambda. */
  name: string;
  /** How logs and errors name it (the state it serves; CheckJob serves CheckWarmup and CheckLoadJob). */
  label: string;
  /** The `${...}` placeholder of its Task states, without `${}`. */
  placeholder: string;
  event: E;
  run(ports: P, event: z.output<E>): Promise<R> | R;
}

/** Any step, whatever its event, result and ports (for tables of steps). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCalibrationStep = CalibrationStep<z.ZodType, unknown, any>;

/**
 * A calibration function that no Task state calls (the ended-execution rule's target, the lease sweep): the same
 * shape without a placeholder, bound and deployed like a step.
 */
export type CalibrationFunction<E extends z.ZodType = z.ZodType, R = unknown, P = CalibrationPorts> = Omit<
  CalibrationStep<E, R, P>,
  'placeholder'
>;
