import { Duration } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, type BucketProps } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

/**
 * A bucket no one reaches but through IAM: public access blocked, TLS only, encrypted with
 * S3-managed keys (what server access log delivery supports), ACLs off unless `props` say.
 */
export function privateBucket(scope: Construct, id: string, props: BucketProps = {}): Bucket {
  return new Bucket(scope, id, {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    enforceSSL: true,
    ...props,
  });
}

/** A private bucket of server access logs, each kept `retentionDays`. */
export function accessLogBucket(scope: Construct, id: string, retentionDays: number, props: BucketProps = {}): Bucket {
  return privateBucket(scope, id, {
    lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(retentionDays) }],
    ...props,
  });
}
