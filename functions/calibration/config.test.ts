import { describe, expect, it } from '@jest/globals';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { loadCalibrationConfig } from './config.js';

const VALID = { AWS_REGION: 'us-east-2', REPORT_BUCKET: 'vllm-pilot-reports', HISTORY_TABLE: 'calibration-history' };

describe('Function: loadCalibrationConfig', () => {
  it('reads the settings, endpoints only when set', () => {
    // Act
    const config = loadCalibrationConfig({ ...VALID, S3_ENDPOINT: '' });

    // Assess
    expect(config).toEqual({
      region: 'us-east-2',
      reportBucket: 'vllm-pilot-reports',
      historyTable: 'calibration-history',
    });
  });

  it.each([
    { case: 'no bucket', env: { ...VALID, REPORT_BUCKET: undefined }, field: /REPORT_BUCKET: is required/ },
    { case: 'a bucket with capitals', env: { ...VALID, REPORT_BUCKET: 'Reports' }, field: /REPORT_BUCKET: must be/ },
    { case: 'no table', env: { ...VALID, HISTORY_TABLE: '' }, field: /HISTORY_TABLE: is required/ },
    { case: 'a bad region', env: { ...VALID, AWS_REGION: 'mars' }, field: /AWS_REGION: must be an AWS region/ },
    { case: 'a bad endpoint', env: { ...VALID, EKS_ENDPOINT: 'ftp://x' }, field: /EKS_ENDPOINT: must be an http/ },
  ])('refuses $case, naming the variable', ({ env, field }) => {
    // Act
    const act = () => loadCalibrationConfig(env);

    // Assess
    expect(act).toThrow(ConfigInvalidError);
    expect(act).toThrow(field);
  });
});
