import type { AddressInfo } from 'node:net';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  type AttributeDefinition,
  type KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';

/** A table the twin creates at start: the shape of CALIBRATION_HISTORY_TABLE plus a name. */
export interface TwinTableDefinition {
  TableName: string;
  KeySchema: readonly { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[];
  AttributeDefinitions: readonly { AttributeName: string; AttributeType: 'S' | 'N' | 'B' }[];
  BillingMode?: 'PAY_PER_REQUEST' | 'PROVISIONED';
}

export interface DynamoDbTwinOptions {
  tables?: readonly TwinTableDefinition[];
  /** The region clients sign for (dynalite checks no signature). Default us-east-1. */
  region?: string;
  log?: (line: string) => void;
}

export interface DynamoDbTwin {
  /** `http://127.0.0.1:<port>`: give it to `DynamoDBClient({ endpoint })`. */
  endpoint: string;
  region: string;
  /** Throwaway credentials the SDK can sign with (dynalite ignores them). */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Stops the server, drops open connections and the in-memory tables. */
  stop(): Promise<void>;
}

/** Names a table that did not become ACTIVE, or a definition dynalite refused. */
export class DynamoDbTwinError extends Error {
  constructor(
    readonly tableName: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`DynamoDB twin table ${tableName}: ${message}`, options);
    this.name = 'DynamoDbTwinError';
  }
}

const TWIN_CREDENTIALS = { accessKeyId: 'AKIDTWINDYNAMODB', secretAccessKey: 'twin-dynamodb-not-a-secret' } as const;
/** createTableMs 0 still flips to ACTIVE on a timer: poll a few times for it. */
const ACTIVE_POLLS = 50;
const ACTIVE_POLL_MS = 10;

/**
 * Starts DynamoDB for the twin: dynalite in memory on 127.0.0.1 (a free port), with `tables` created through the
 * real SDK and ACTIVE before this resolves. The product's DynamoDB adapters talk to it as to DynamoDB.
 */
export async function startDynamoDbTwin(options: DynamoDbTwinOptions = {}): Promise<DynamoDbTwin> {
  const region = options.region ?? 'us-east-1';
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stop = () =>
    new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      // The SDK's keep-alive sockets would hold close() open.
      server.closeAllConnections();
    });

  const client = new DynamoDBClient({ region, endpoint, credentials: TWIN_CREDENTIALS, maxAttempts: 1 });
  try {
    for (const table of options.tables ?? []) {
      await createTable(client, table);
      options.log?.(`dynamodb twin: created table ${table.TableName}`);
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, region, credentials: { ...TWIN_CREDENTIALS }, stop };
}

async function createTable(client: DynamoDBClient, table: TwinTableDefinition): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: table.TableName,
        KeySchema: table.KeySchema.map((key): KeySchemaElement => ({ ...key })),
        AttributeDefinitions: table.AttributeDefinitions.map((attribute): AttributeDefinition => ({ ...attribute })),
        BillingMode: table.BillingMode ?? 'PAY_PER_REQUEST',
        ...(table.BillingMode === 'PROVISIONED'
          ? { ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 } }
          : {}),
      }),
    );
  } catch (error) {
    throw new DynamoDbTwinError(table.TableName, `CreateTable failed: ${(error as Error).message}`, { cause: error });
  }
  for (let poll = 0; poll < ACTIVE_POLLS; poll += 1) {
    const described = await client.send(new DescribeTableCommand({ TableName: table.TableName }));
    if (described.Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_POLL_MS));
  }
  throw new DynamoDbTwinError(table.TableName, `not ACTIVE after ${ACTIVE_POLLS * ACTIVE_POLL_MS} ms`);
}
