import { afterEach, describe, expect, it } from '@jest/globals';
import {
  AmpClient,
  DeleteAlertManagerDefinitionCommand,
  DescribeAlertManagerDefinitionCommand,
  DescribeRuleGroupsNamespaceCommand,
  InternalServerException,
  ResourceNotFoundException,
} from '@aws-sdk/client-amp';
import { mockClient } from 'aws-sdk-client-mock';
import { ClientAmpControlPlane } from './ClientAmpControlPlane.js';
import { AmpAnswerInvalidError, AmpRequestError } from './errors.js';

const WORKSPACE = 'ws-b226cc2a-a446-46a9-933a-ac50479a5568';
const metadata = { $metadata: {} };
const when = new Date('2026-12-03T12:00:00Z');

describe('Class: ClientAmpControlPlane', () => {
  const amp = mockClient(AmpClient);
  const client = new AmpClient({ region: 'us-east-2', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' } });
  const controlPlane = new ClientAmpControlPlane({ client, workspaceId: WORKSPACE });

  afterEach(() => {
    amp.reset();
  });

  describe('Method: describe', () => {
    it('decodes the data as UTF-8 and passes the abort signal to the SDK', async () => {
      // Prepare
      const rules = "groups:\n  - name: 'prod'\n    rules: [] # p95 ≤ 2.5 s\n";
      amp.on(DescribeRuleGroupsNamespaceCommand).resolves({
        ruleGroupsNamespace: {
          arn: 'arn',
          name: 'vllm-eks-pilot-prod',
          data: new TextEncoder().encode(rules),
          status: { statusCode: 'ACTIVE' },
          createdAt: when,
          modifiedAt: when,
        },
        ...metadata,
      });
      const signal = new AbortController().signal;

      // Act
      const held = await controlPlane.describe(
        { kind: 'ruleGroupsNamespace', name: 'vllm-eks-pilot-prod' },
        { signal },
      );

      // Assess
      expect(held).toEqual({ data: rules, status: { code: 'ACTIVE' } });
      expect(amp.call(0).args[0].input).toEqual({ workspaceId: WORKSPACE, name: 'vllm-eks-pilot-prod' });
      expect((amp.call(0).args as unknown[])[1]).toEqual({ abortSignal: signal });
    });

    it('answers null when the workspace has none (ResourceNotFoundException)', async () => {
      amp
        .on(DescribeAlertManagerDefinitionCommand)
        .rejects(new ResourceNotFoundException({ message: 'nope', resourceId: 'x', resourceType: 'y', ...metadata }));
      await expect(controlPlane.describe({ kind: 'alertManagerDefinition' })).resolves.toBeNull();
    });

    it.each([
      { name: 'a status code AMP does not document', status: { statusCode: 'PAUSED' }, data: true, problem: 'PAUSED' },
      { name: 'no data', status: { statusCode: 'ACTIVE' }, data: false, problem: 'holds no data' },
    ])('refuses an answer with $name (AmpAnswerInvalidError)', async ({ status, data, problem }) => {
      // Prepare
      amp.on(DescribeAlertManagerDefinitionCommand).resolves({
        alertManagerDefinition: {
          ...(data ? { data: new TextEncoder().encode('x: 1') } : {}),
          status: status as { statusCode: 'ACTIVE' },
          createdAt: when,
          modifiedAt: when,
        } as never,
        ...metadata,
      });

      // Act
      const thrown = await controlPlane.describe({ kind: 'alertManagerDefinition' }).catch((e: unknown) => e);

      // Assess
      expect(thrown).toBeInstanceOf(AmpAnswerInvalidError);
      expect((thrown as Error).message).toContain(problem);
    });

    it('names a server-side failure as a retryable AmpRequestError', async () => {
      amp
        .on(DescribeAlertManagerDefinitionCommand)
        .rejects(new InternalServerException({ message: 'boom', ...metadata }));
      const thrown = await controlPlane.describe({ kind: 'alertManagerDefinition' }).catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(AmpRequestError);
      expect(thrown).toMatchObject({ retryable: true, operation: 'DescribeAlertManagerDefinition' });
    });
  });

  describe('Method: delete', () => {
    it('resolves when there is nothing to delete', async () => {
      amp
        .on(DeleteAlertManagerDefinitionCommand)
        .rejects(new ResourceNotFoundException({ message: 'nope', resourceId: 'x', resourceType: 'y', ...metadata }));
      await expect(controlPlane.delete({ kind: 'alertManagerDefinition' })).resolves.toBeUndefined();
    });
  });

  describe('Method: describeRuleGroups (preflight check 5)', () => {
    it('gives the namespace data, or undefined when there is none', async () => {
      // Prepare
      amp
        .on(DescribeRuleGroupsNamespaceCommand)
        .rejectsOnce(
          new ResourceNotFoundException({ message: 'nope', resourceId: 'x', resourceType: 'y', ...metadata }),
        )
        .resolves({
          ruleGroupsNamespace: {
            arn: 'arn',
            name: 'n',
            data: new TextEncoder().encode('groups: []\n'),
            status: { statusCode: 'ACTIVE' },
            createdAt: when,
            modifiedAt: when,
          },
          ...metadata,
        });

      // Act and Assess
      await expect(controlPlane.describeRuleGroups('n')).resolves.toBeUndefined();
      await expect(controlPlane.describeRuleGroups('n')).resolves.toBe('groups: []\n');
    });
  });
});
