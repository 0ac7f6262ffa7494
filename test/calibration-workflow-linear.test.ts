import { describe } from '@jest/globals';
import {
  describeEarlyEnding,
  describePathTests,
  describeValidateInput,
  useCalibrationTwin,
} from './helpers/calibrationWorkflow.js';

// The calibration state machine on the twin with the guide's linear plan, early step ending and ValidateInput (the
// other strategies run in calibration-workflow-strategies.test.ts, on a twin of their own, in parallel).
describe('Workflow: calibration on the twin', () => {
  useCalibrationTwin();
  describePathTests('linear');
  describeEarlyEnding();
  describeValidateInput();
});
