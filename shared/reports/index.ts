/** Calibration reports: the ReportStore port and its S3 adapter. */
export { S3ReportStore } from './S3ReportStore.js';
export { ReportKeyInvalidError, ReportWriteError } from './errors.js';
export { assertReportKey } from './reportKey.js';
export type { ReportStore } from './types.js';
