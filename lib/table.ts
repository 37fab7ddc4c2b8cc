import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { tableSchema } from '#data/table';

/** Properties of a {@link ServiceTable}. */
export interface ServiceTableProps {
  /** Refuse `DeleteTable` until switched off; turn it off only for throwaway stacks. */
  readonly deletionProtection: boolean;
}

/** The single DynamoDB table, shaped by `tableSchema` so CDK and the local cloud agree on keys and indexes. */
export class ServiceTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: ServiceTableProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: tableSchema.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableSchema.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: tableSchema.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.deletionProtection,
      // The AWS managed key (aws/dynamodb): key use shows in CloudTrail, and there is no key
      // policy of our own to keep in step with the functions' grants.
      encryption: TableEncryption.AWS_MANAGED,
    });
    for (const index of tableSchema.globalIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }
  }
}
