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
  globalIndexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    // Trace search (see `keys.traceListing`): sparse indexes of invocation items, one per
    // GET /traces filter, each newest `started_at` first when read backwards.
    { name: 'traces_by_org', partitionKey: 'tr_org', sortKey: 'started_at' },
    { name: 'traces_by_agent', partitionKey: 'tr_agent', sortKey: 'started_at' },
    { name: 'traces_by_revision', partitionKey: 'tr_revision', sortKey: 'started_at' },
    { name: 'traces_by_status', partitionKey: 'tr_status', sortKey: 'started_at' },
    { name: 'traces_by_session', partitionKey: 'tr_session', sortKey: 'started_at' },
  ] as readonly { name: string; partitionKey: string; sortKey: string }[],
} as const;
