import { describe } from '@jest/globals';
import { STRATEGY_NAMES } from '../shared/calibration/index.js';
import { describePathTests, useCalibrationTwin } from './helpers/calibrationWorkflow.js';

// The calibration state machine's path tests on the twin with every strategy but linear (which has its own file):
// a new strategy is tested here without a line of test code.
describe('Workflow: calibration on the twin', () => {
  useCalibrationTwin();
  for (const strategy of STRATEGY_NAMES.filter((name) => name !== 'linear')) describePathTests(strategy);
});
