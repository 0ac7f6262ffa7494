/**
 * The alert state table: one definition, used by the twin to create it (dynalite) and by serverless.yml.
 *
 * pk = the target's name, sk = the alert's fingerprint: one Query reads a target's alerts. `expiresAt` (epoch
 * seconds) is the TTL attribute: a resolved alert whose resolved notification went out is kept a while (to show what
 * happened) and then deleted by DynamoDB.
 */
export const ALERT_STATE_KEY = { partition: 'pk', sort: 'sk', ttl: 'expiresAt' } as const;

export const ALERT_STATE_TABLE = {
  KeySchema: [
    { AttributeName: ALERT_STATE_KEY.partition, KeyType: 'HASH' },
    { AttributeName: ALERT_STATE_KEY.sort, KeyType: 'RANGE' },
  ],
  AttributeDefinitions: [
    { AttributeName: ALERT_STATE_KEY.partition, AttributeType: 'S' },
    { AttributeName: ALERT_STATE_KEY.sort, AttributeType: 'S' },
  ],
  BillingMode: 'PAY_PER_REQUEST',
} as const;
