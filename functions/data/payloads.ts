/** The bucket of span payloads and attempt checkpoints (both expire with the lifecycle rule). */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config } from '#kit/config';

export const s3 = new S3Client({});
// Signs URLs without the SDK's optional checksum parameters: the sandbox uploads with plain fetch.
const signer = new S3Client({ requestChecksumCalculation: 'WHEN_REQUIRED' });

/** Resolves when the bucket answers; rejects with the reason otherwise. */
export async function probeBucket(signal: AbortSignal): Promise<void> {
  await s3.send(new HeadBucketCommand({ Bucket: config.payloadBucket }), { abortSignal: signal });
}

// Invocation keys are client-chosen: encode them so any key makes a plain object key.
const segment = (value: string) => encodeURIComponent(value);

/** Where one payload of a span lives. */
export function payloadKey(organizationId: string, invocationKey: string, spanId: string, part: 'input' | 'output'): string {
  return `payloads/${segment(organizationId)}/${segment(invocationKey)}/${spanId}/${part}.json`;
}

/** Where an attempt's checkpoint lives. */
export function checkpointKey(organizationId: string, invocationKey: string, attempt: number): string {
  return `checkpoints/${segment(organizationId)}/${segment(invocationKey)}/att-${attempt}.json`;
}

/** Stores a JSON document. */
export async function putJson(key: string, body: string): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: config.payloadBucket, Key: key, Body: body, ContentType: 'application/json' }));
}

/** A stored JSON document's text, or undefined when there is none. */
export async function getJson(key: string): Promise<string | undefined> {
  try {
    const object = await s3.send(new GetObjectCommand({ Bucket: config.payloadBucket, Key: key }));
    return await object.Body!.transformToString('utf8');
  } catch (error) {
    if (error instanceof NoSuchKey || (error instanceof Error && error.name === 'NoSuchKey')) return undefined;
    throw error;
  }
}

/**
 * The bytes of a stored object, only its first `firstBytes` when given (a ranged read), or
 * undefined when there is none. Other failures (bucket unreachable, access) are thrown.
 */
export async function getBytes(key: string, firstBytes?: number): Promise<Uint8Array | undefined> {
  try {
    const object = await s3.send(
      new GetObjectCommand({ Bucket: config.payloadBucket, Key: key, ...(firstBytes ? { Range: `bytes=0-${firstBytes - 1}` } : {}) }),
    );
    return await object.Body!.transformToByteArray();
  } catch (error) {
    if (error instanceof NoSuchKey || (error instanceof Error && error.name === 'NoSuchKey')) return undefined;
    throw error;
  }
}

/** Where an invocation's terminal workspace snapshot lives: beside its checkpoints, so it expires and is deleted with them. */
export function workspaceSnapshotKey(organizationId: string, invocationKey: string): string {
  return `checkpoints/${segment(organizationId)}/${segment(invocationKey)}/workspace.tar.gz`;
}

/**
 * URLs to read and to replace an invocation's workspace snapshot, valid for `seconds`: all
 * the sandbox function, whose role may do nothing, ever gets to reach the bucket with.
 */
export async function workspaceSnapshotUrls(organizationId: string, invocationKey: string, seconds: number): Promise<{ get: string; put: string }> {
  const target = { Bucket: config.payloadBucket, Key: workspaceSnapshotKey(organizationId, invocationKey) };
  const [get, put] = await Promise.all([
    getSignedUrl(signer, new GetObjectCommand(target), { expiresIn: seconds }),
    getSignedUrl(signer, new PutObjectCommand(target), { expiresIn: seconds }),
  ]);
  return { get, put };
}

/** Deletes every payload and checkpoint of an invocation (one listing page, up to 1000 keys, per request). */
export async function deleteInvocationObjects(organizationId: string, invocationKey: string): Promise<void> {
  const prefixes = ['payloads', 'checkpoints'].map((root) => `${root}/${segment(organizationId)}/${segment(invocationKey)}/`);
  for (const Prefix of prefixes) {
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: config.payloadBucket, Prefix, ContinuationToken: token }));
      const objects = (page.Contents ?? []).map(({ Key }) => ({ Key: Key! }));
      if (objects.length) {
        const { Errors } = await s3.send(new DeleteObjectsCommand({ Bucket: config.payloadBucket, Delete: { Objects: objects, Quiet: true } }));
        if (Errors?.length) throw new Error(`could not delete ${Errors.length} objects below ${Prefix}: ${Errors[0]!.Code}`);
      }
      token = page.NextContinuationToken;
    } while (token);
  }
}
