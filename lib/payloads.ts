import { Duration } from 'aws-cdk-lib';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { accessLogBucket, privateBucket } from './private-bucket';


/** Days server access logs of the payload bucket are kept. */
const ACCESS_LOG_RETENTION_DAYS = 365;

/** Properties of {@link Payloads}. */
export interface PayloadsProps {
  /** Days a payload object (and an attempt checkpoint) is kept: the span retention window. */
  readonly retentionDays: number;
}

/** The S3 bucket of span payloads: model and tool inputs and outputs, kept out of table items for their size. */
export class Payloads extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: PayloadsProps) {
    super(scope, id);
    // Payloads hold model and tool inputs and outputs, so every access to them is logged.
    const accessLogs = accessLogBucket(this, 'AccessLogs', ACCESS_LOG_RETENTION_DAYS);

    this.bucket = privateBucket(this, 'Bucket', {
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'payloads/',
      lifecycleRules: [
        {
          id: 'expire-payloads',
          expiration: Duration.days(props.retentionDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
    });
  }
}
