/** The span payload bucket. */
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { config } from '#core/config';

export const s3 = new S3Client({});

/** Resolves when the bucket answers; rejects with the reason otherwise. */
export async function probeBucket(signal: AbortSignal): Promise<void> {
  await s3.send(new HeadBucketCommand({ Bucket: config.payloadBucket }), { abortSignal: signal });
}
