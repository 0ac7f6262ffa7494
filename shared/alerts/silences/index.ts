/** Alert silences: a calibration's while it holds a target, and people's; honoured by the alert evaluator. */
export { DynamoDbSilenceStore } from './DynamoDbSilenceStore.js';
export { AlertSilenceInvalidError, AlertSilenceStoreError } from './errors.js';
export {
  activeSilence,
  checkSilence,
  MAX_SILENCE_SECONDS,
  SILENCE_KINDS,
  silenceTargetKey,
  type Silence,
  type SilenceKind,
  type SilenceStore,
} from './silence.js';
export { ALERT_SILENCES_TABLE, SILENCE_KEY } from './table.js';
