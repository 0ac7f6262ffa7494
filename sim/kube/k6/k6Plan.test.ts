import { describe, expect, it } from '@jest/globals';
import { K6_ENV } from '../../../shared/kube/index.js';
import { K6ConfigInvalidError } from './errors.js';
import { type K6Container, k6PlanFromContainer } from './k6Plan.js';

const base = [
  { name: K6_ENV.targetUrl, value: 'http://vllm-inference-svc.default.svc:8000' },
  { name: K6_ENV.model, value: 'm' },
];
const container = (
  env: Array<{ name: string; value?: string; valueFrom?: unknown }>,
  args = ['run', '/scripts/load.js'],
): K6Container => ({
  args,
  env: [...base, ...env],
});

describe('Function: k6PlanFromContainer', () => {
  it.each([
    {
      case: 'the load Job: constant-arrival-rate from env',
      input: container([
        { name: K6_ENV.executor, value: 'constant-arrival-rate' },
        { name: K6_ENV.rate, value: '20' },
        { name: K6_ENV.durationSeconds, value: '60' },
        { name: K6_ENV.preAllocatedVUs, value: '50' },
        { name: K6_ENV.maxVUs, value: '500' },
        { name: K6_ENV.maxTokens, value: '32' },
      ]),
      expected: {
        executor: 'constant-arrival-rate',
        rate: 20,
        durationSeconds: 60,
        preAllocatedVUs: 50,
        maxVUs: 500,
        maxTokens: 32,
        script: '/scripts/load.js',
      },
    },
    // The product's script defaults to constant-arrival-rate for 60 s with 50/500 VUs.
    {
      case: 'script defaults',
      input: container([{ name: K6_ENV.rate, value: '2.5' }]),
      expected: {
        executor: 'constant-arrival-rate',
        rate: 2.5,
        durationSeconds: 60,
        preAllocatedVUs: 50,
        maxVUs: 500,
        maxTokens: 100,
        requestTimeoutSeconds: 240,
      },
    },
    {
      case: 'the warmup Job: shared-iterations from env',
      input: container([
        { name: K6_ENV.executor, value: 'shared-iterations' },
        { name: K6_ENV.vus, value: '1' },
        { name: K6_ENV.iterations, value: '100' },
      ]),
      expected: { executor: 'shared-iterations', vus: 1, iterations: 100 },
    },
    // The guide's warmup: `k6 run --vus 1 --iterations 100 /scripts/warmup.js` replaces the script's scenario.
    {
      case: 'the guide warmup: --vus/--iterations on the command line',
      input: container(
        [{ name: K6_ENV.executor, value: 'constant-arrival-rate' }],
        ['run', '--vus', '2', '--iterations=7', '/scripts/warmup.js'],
      ),
      expected: { executor: 'shared-iterations', vus: 2, iterations: 7, script: '/scripts/warmup.js' },
    },
    // k6 reads K6_VUS / K6_ITERATIONS as its own options, which replace the script's scenarios as the flags do.
    {
      case: "k6's own K6_VUS / K6_ITERATIONS",
      input: container([
        { name: 'K6_VUS', value: '4' },
        { name: 'K6_ITERATIONS', value: '8' },
      ]),
      expected: { executor: 'shared-iterations', vus: 4, iterations: 8 },
    },
    {
      case: '-e NAME=VALUE overrides the env',
      input: container(
        [{ name: K6_ENV.rate, value: '5' }],
        ['run', '-e', `${K6_ENV.rate}=9`, '-o', 'experimental-prometheus-rw', '/s.js'],
      ),
      expected: { rate: 9, script: '/s.js', restAddress: 'localhost:6565' },
    },
    // The product's Jobs serve k6's REST API on the Pod's address, for the Pod proxy.
    {
      case: '--address host:port',
      input: container([{ name: K6_ENV.rate, value: '5' }], ['run', '--address', '0.0.0.0:6565', '/s.js']),
      expected: { rate: 5, script: '/s.js', restAddress: '0.0.0.0:6565' },
    },
  ])('$case', ({ input, expected }) => {
    // Act
    const plan = k6PlanFromContainer(input);

    // Assess
    expect(plan).toMatchObject(expected);
  });

  it.each([
    { case: 'no rate for constant-arrival-rate', input: container([]), field: `env ${K6_ENV.rate}` },
    {
      case: 'a rate that is not a number',
      input: container([{ name: K6_ENV.rate, value: 'fast' }]),
      field: `env ${K6_ENV.rate}`,
    },
    {
      case: 'an unknown executor',
      input: container([{ name: K6_ENV.executor, value: 'ramping-vus' }]),
      field: `env ${K6_ENV.executor}`,
    },
    {
      case: 'no target',
      input: {
        args: ['run', '/s.js'],
        env: [
          { name: K6_ENV.model, value: 'm' },
          { name: K6_ENV.rate, value: '1' },
        ],
      },
      field: `env ${K6_ENV.targetUrl}`,
    },
    {
      case: 'a target that is not a URL',
      input: container([
        { name: K6_ENV.targetUrl, value: 'vllm:8000' },
        { name: K6_ENV.rate, value: '1' },
      ]),
      field: `env ${K6_ENV.targetUrl}`,
    },
    {
      case: 'a value from a Secret',
      input: container([{ name: K6_ENV.rate, valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }]),
      field: `env ${K6_ENV.rate}`,
    },
    {
      case: 'maxVUs below preAllocatedVUs',
      input: container([
        { name: K6_ENV.rate, value: '1' },
        { name: K6_ENV.preAllocatedVUs, value: '10' },
        { name: K6_ENV.maxVUs, value: '5' },
      ]),
      field: `env ${K6_ENV.maxVUs}`,
    },
    { case: 'no `run`', input: container([{ name: K6_ENV.rate, value: '1' }], ['/s.js']), field: 'args' },
    { case: 'no script', input: container([{ name: K6_ENV.rate, value: '1' }], ['run']), field: 'args' },
    {
      case: 'a fractional --vus',
      input: container([], ['run', '--vus', '1.5', '--iterations', '3', '/s.js']),
      field: 'args --vus',
    },
    {
      case: 'an --address without a port',
      input: container([{ name: K6_ENV.rate, value: '1' }], ['run', '--address', '0.0.0.0', '/s.js']),
      field: 'args --address',
    },
  ])('rejects $case, naming $field', ({ input, field }) => {
    // Act
    let error: unknown;
    try {
      k6PlanFromContainer(input);
    } catch (e) {
      error = e;
    }

    // Assess
    expect(error).toBeInstanceOf(K6ConfigInvalidError);
    expect((error as K6ConfigInvalidError).field).toBe(field);
    expect((error as Error).message).toContain('expected');
  });
});
