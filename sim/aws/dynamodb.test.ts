import { describe, expect, it } from '@jest/globals';
import { createConnection } from 'node:net';
import {
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { CALIBRATION_HISTORY_TABLE } from '../../shared/calibration/history/index.js';
import { DynamoDbTwinError, startDynamoDbTwin, type DynamoDbTwin } from './dynamodb.js';

function clientFor(twin: DynamoDbTwin): DynamoDBClient {
  return new DynamoDBClient({
    region: twin.region,
    endpoint: twin.endpoint,
    credentials: twin.credentials,
    maxAttempts: 1,
  });
}

/** Resolves true when something accepts a TCP connection at `endpoint`. */
function accepts(endpoint: string): Promise<boolean> {
  const { hostname, port } = new URL(endpoint);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('Function: startDynamoDbTwin', () => {
  it('creates the given tables ACTIVE, with their keys and on-demand billing, on 127.0.0.1', async () => {
    // Prepare
    const twin = await startDynamoDbTwin({
      tables: [{ TableName: 'calibration-history', ...CALIBRATION_HISTORY_TABLE }],
      region: 'eu-west-1',
    });
    const client = clientFor(twin);

    try {
      // Act
      const { Table } = await client.send(new DescribeTableCommand({ TableName: 'calibration-history' }));
      const { TableNames } = await client.send(new ListTablesCommand({}));

      // Assess
      expect(twin.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(TableNames).toEqual(['calibration-history']);
      expect(Table?.TableStatus).toBe('ACTIVE');
      expect(Table?.KeySchema).toEqual([
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ]);
      expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    } finally {
      client.destroy();
      await twin.stop();
    }
  });

  it('stores items as DynamoDB does, conditional writes included', async () => {
    // Prepare
    const twin = await startDynamoDbTwin({ tables: [{ TableName: 'alerts', ...CALIBRATION_HISTORY_TABLE }] });
    const client = clientFor(twin);
    const item = { pk: { S: 'a' }, sk: { S: '1' }, state: { S: 'firing' } };

    try {
      // Act
      await client.send(
        new PutItemCommand({ TableName: 'alerts', Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
      const second = client.send(
        new PutItemCommand({ TableName: 'alerts', Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
      const stored = await client.send(new GetItemCommand({ TableName: 'alerts', Key: { pk: item.pk, sk: item.sk } }));

      // Assess
      await expect(second).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
      expect(stored.Item).toEqual(item);
    } finally {
      client.destroy();
      await twin.stop();
    }
  });

  it('releases its port on stop, even with the SDK’s keep-alive connection open', async () => {
    // Prepare
    const twin = await startDynamoDbTwin();
    const client = clientFor(twin);
    await client.send(new ListTablesCommand({}));

    // Act
    await twin.stop();

    // Assess
    expect(await accepts(twin.endpoint)).toBe(false);
    client.destroy();
  });

  it('refuses a table definition DynamoDB would refuse, naming the table, and stops', async () => {
    // Act
    const act = startDynamoDbTwin({
      tables: [
        {
          TableName: 'broken',
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'other', AttributeType: 'S' }],
        },
      ],
    });

    // Assess
    await expect(act).rejects.toThrow(DynamoDbTwinError);
    await expect(
      startDynamoDbTwin({
        tables: [
          {
            TableName: 'broken',
            KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
            AttributeDefinitions: [{ AttributeName: 'other', AttributeType: 'S' }],
          },
        ],
      }),
    ).rejects.toThrow(/^DynamoDB twin table broken: CreateTable failed: /);
  });
});
