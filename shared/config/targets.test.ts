import { describe, expect, it } from '@jest/globals';
import { ConfigInvalidError } from './errors.js';
import { parseTargets } from './targets.js';

const valid = {
  name: 'prod-ministral',
  cluster: 'prod_cluster-1',
  namespace: 'inference',
  deployment: 'vllm-inference-app',
  model: 'mistralai/Ministral-8B-Instruct-2410',
  clusterLabel: 'cluster',
};

function issuesOf(input: unknown): string[] {
  try {
    parseTargets(input);
  } catch (error) {
    if (error instanceof ConfigInvalidError) return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
    throw error;
  }
  throw new Error('expected parseTargets to throw');
}

describe('Function: parseTargets', () => {
  it('accepts JSON text and returns the targets', () => {
    // Prepare
    const { clusterLabel: _unused, ...withoutLabel } = valid;
    const json = JSON.stringify([valid, { ...withoutLabel, name: 'staging' }]);

    // Act
    const targets = parseTargets(json);

    // Assess
    expect(targets).toEqual([valid, { ...withoutLabel, name: 'staging' }]);
    expect(targets[1]).not.toHaveProperty('clusterLabel');
  });

  it.each([
    {
      case: 'namespace that is not a DNS-1123 label, reported with its index',
      input: [valid, { ...valid, name: 'b', namespace: 'Inference_NS' }],
      expected: /^targets\[1\]\.namespace: "Inference_NS" is not valid; accepted: a DNS-1123 label/,
    },
    {
      case: 'deployment longer than 63 characters',
      input: [{ ...valid, deployment: 'a'.repeat(64) }],
      expected: /^targets\[0\]\.deployment: .* accepted: a DNS-1123 label: 1-63/,
    },
    {
      case: 'cluster name with a dot (EKS refuses it)',
      input: [{ ...valid, cluster: 'prod.cluster' }],
      expected: /^targets\[0\]\.cluster: "prod\.cluster" is not valid; accepted: an EKS cluster name/,
    },
    {
      case: 'empty model',
      input: [{ ...valid, model: '' }],
      expected: /^targets\[0\]\.model: must not be empty/,
    },
    {
      case: 'reserved Prometheus label name',
      input: [{ ...valid, clusterLabel: '__name__' }],
      expected: /^targets\[0\]\.clusterLabel: "__name__" is not valid; accepted: a Prometheus label name/,
    },
    {
      case: 'misspelt key',
      input: [{ ...valid, namspace: 'x' }],
      expected: /^targets\[0\]: Unrecognized key: "namspace"/,
    },
    {
      case: 'missing field',
      input: [{ ...valid, deployment: undefined }],
      expected: /^targets\[0\]\.deployment: must be a string/,
    },
    {
      case: 'empty list',
      input: [],
      expected: /^targets: must list at least one target/,
    },
    {
      case: 'not an array',
      input: { targets: [valid] },
      expected: /^targets: must be a JSON array of targets/,
    },
    {
      case: 'text that is not JSON',
      input: '[{"name":',
      expected: /^targets: is not valid JSON \(.+\); accepted: a JSON array of targets/,
    },
  ])('refuses a $case', ({ input, expected }) => {
    // Act
    const issues = issuesOf(input);

    // Assess
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(expected);
  });

  it('names every duplicate name with the index of the first use', () => {
    // Prepare
    const input = [valid, { ...valid, name: 'other' }, { ...valid }];

    // Act
    const issues = issuesOf(input);

    // Assess
    expect(issues).toEqual([
      'targets[2].name: duplicate name "prod-ministral" (also used by targets[0]); names must be unique',
    ]);
  });

  it('reports all bad fields at once, in a message that names them', () => {
    // Prepare
    const input = [{ ...valid, namespace: 'A', deployment: '-x-' }];

    // Act
    let caught: unknown;
    try {
      parseTargets(input);
    } catch (error) {
      caught = error;
    }

    // Assess
    expect(caught).toBeInstanceOf(ConfigInvalidError);
    const error = caught as ConfigInvalidError;
    expect(error.name).toBe('ConfigInvalidError');
    expect(error.issues.map((issue) => issue.path)).toEqual(['targets[0].namespace', 'targets[0].deployment']);
    expect(error.message).toMatch(/^invalid targets: targets\[0\]\.namespace: .*; targets\[0\]\.deployment: /);
  });
});
