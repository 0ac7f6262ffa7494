/**
 * The calibration history table: one definition, used by the twin to create it (dynalite) and by serverless.yml
 * (the Resources section takes the same KeySchema, AttributeDefinitions and BillingMode).
 *
 * pk = targetKey (`<cluster>/<namespace>/<deployment>`), sk = `<finishedAt>#<executionName>`: one partition per
 * deployment, sorted by time, so "latest" is one Query in descending order.
 */
export const HISTORY_KEY = { partition: 'pk', sort: 'sk' } as const;

export const CALIBRATION_HISTORY_TABLE = {
  KeySchema: [
    { AttributeName: HISTORY_KEY.partition, KeyType: 'HASH' },
    { AttributeName: HISTORY_KEY.sort, KeyType: 'RANGE' },
  ],
  AttributeDefinitions: [
    { AttributeName: HISTORY_KEY.partition, AttributeType: 'S' },
    { AttributeName: HISTORY_KEY.sort, AttributeType: 'S' },
  ],
  // A handful of writes per calibration: on-demand costs nothing while idle.
  BillingMode: 'PAY_PER_REQUEST',
} as const;

/** The sort key of a record: ISO times sort lexically in time order, and the execution name makes it unique. */
export function historySortKey(finishedAt: string, executionName: string): string {
  return `${finishedAt}#${executionName}`;
}
