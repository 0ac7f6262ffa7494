/** Where calibration reports (JSON, SVG charts) are kept: S3 on AWS, a local folder for the twin and the CLI. */
export interface ReportStore {
  /** Writes `body` under `key` (validated by assertReportKey); resolves to where it now is. */
  put(key: string, body: string, contentType: string): Promise<{ location: string }>;
}
