/**
 * The alert silences table: one definition, used by the twin to create it (dynalite) and by the stack. pk = the
 * target's key (`<cluster>/<namespace>/<deployment>`), sk = the silence's id: one Query reads a target's silences.
 * `expiresAt` (epoch seconds, a day after the silence ends) is the TTL attribute.
 */
export const SILENCE_KEY = { partition: 'pk', sort: 'sk', ttl: 'expiresAt' } as const;

export const ALERT_SILENCES_TABLE = {
  KeySchema: [
    { AttributeName: SILENCE_KEY.partition, KeyType: 'HASH' },
    { AttributeName: SILENCE_KEY.sort, KeyType: 'RANGE' },
  ],
  AttributeDefinitions: [
    { AttributeName: SILENCE_KEY.partition, AttributeType: 'S' },
    { AttributeName: SILENCE_KEY.sort, AttributeType: 'S' },
  ],
  BillingMode: 'PAY_PER_REQUEST',
} as const;
