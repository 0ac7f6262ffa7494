import { readFileSync, statSync } from 'node:fs';
import DefaultSequencer from '@jest/test-sequencer';

/**
 * Jest runs the files it has timed longest first. On a fresh clone it has no timings and orders by file size; the
 * files that start a twin or the CLI are short (their cases live in test/helpers) but take minutes, so they would
 * start last and the run would wait on them. A file with no timing yet gets an estimate instead: a minute when it
 * starts a twin or the CLI, else a millisecond per 100 bytes.
 */
const SLOW = /startDemoTwin|startTwin\(|useCalibrationTwin|describeAlertsOnTwin|runCli\(|startCli\(/;
const Base = DefaultSequencer.default ?? DefaultSequencer;

export default class TwinsFirstSequencer extends Base {
  time(test) {
    const measured = super.time(test);
    if (measured !== undefined) return measured;
    return SLOW.test(readFileSync(test.path, 'utf8')) ? 60_000 : statSync(test.path).size / 100;
  }
}
