/**
 * The single table's physical shape, declared once: CDK creates it from this, the local
 * cloud creates it from this, and every key string is built in `keys.ts`.
 */
export const tableSchema = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB deletes the item some time after (reads filter it first). */
  ttlAttribute: 'expires_at',
  /** gsi1: sessions of an organization by `updated_at` (see `keys.sessionListing`). */
  globalIndexes: [{ name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' }] as readonly { name: string; partitionKey: string; sortKey: string }[],
} as const;
