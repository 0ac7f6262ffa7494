import { describe, expect, it } from '@jest/globals';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { loadDriftDetectorConfig } from './config.js';

const TARGET = { name: 'prod', cluster: 'c', namespace: 'llm', deployment: 'd', model: 'm' };
const ENV = {
  AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1',
  AWS_REGION: 'us-east-2',
  DRIFT_TOPIC_ARN: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-dev-preflight',
  HISTORY_TABLE: 'history',
};

describe('Function: loadDriftDetectorConfig', () => {
  it("reads the targets with their drift settings, the guide's defaults where a target sets none", () => {
    // Act
    const config = loadDriftDetectorConfig({ ...ENV, TARGETS: JSON.stringify([TARGET]) });

    // Assess
    expect(config.targets).toEqual([
      { target: TARGET, settings: { mode: 'notify', windowSeconds: 600, cooldownHours: 24 } },
    ]);
    expect(config.stateMachineArn).toBeUndefined();
  });

  it.each([
    {
      case: 'auto without the state machine',
      env: {
        ...ENV,
        TARGETS: JSON.stringify([
          { ...TARGET, drift: { mode: 'auto', maintenanceWindow: { start: '02:00', end: '04:00' } } },
        ]),
      },
      message: /STATE_MACHINE_ARN: is required: target\(s\) prod have drift mode auto/,
    },
    {
      case: 'a bad drift setting',
      env: { ...ENV, TARGETS: JSON.stringify([{ ...TARGET, drift: { mode: 'always' } }]) },
      message: /TARGETS: targets\[0\]\.drift\.mode: "always" is not a mode/,
    },
    {
      case: 'a state machine ARN that is none',
      env: { ...ENV, TARGETS: JSON.stringify([TARGET]), STATE_MACHINE_ARN: 'calibration' },
      message: /STATE_MACHINE_ARN: must be a state machine ARN/,
    },
  ])('refuses $case, naming it', ({ env, message }) => {
    // Act
    const attempt = () => loadDriftDetectorConfig(env);

    // Assess
    expect(attempt).toThrow(ConfigInvalidError);
    expect(attempt).toThrow(message);
  });
});
