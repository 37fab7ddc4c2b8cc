import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '#local/account';
import { startS3 } from '#local/s3';

const BUCKET = 'test-payloads';
let dir: string;

function client(endpoint: string): S3Client {
  // The same settings the service gets from AWS_REQUEST/RESPONSE_CHECKSUM_* in the local env.
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-s3-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the local S3 (s3rver in a child process)', { timeout: 20_000 }, () => {
  it('round-trips bytes, pages listings and deletes in bulk, path-style on its own', async () => {
    const s3 = await startS3({ dataDir: null, bucket: BUCKET });
    const c = client(s3.endpoint);
    const hosts: string[] = [];
    c.middlewareStack.add(
      (next) => async (args) => {
        hosts.push((args.request as { hostname: string }).hostname);
        return next(args);
      },
      { step: 'finalizeRequest' },
    );
    const bytes = randomBytes(200_000);

    await c.send(new HeadBucketCommand({ Bucket: BUCKET }));
    await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'spans/a b.bin', Body: bytes }));
    const read = await c.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'spans/a b.bin' }));
    for (let i = 0; i < 5; i++) await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `page/${i}`, Body: `object ${i}` }));
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await c.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'page/', MaxKeys: 2, ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((object) => object.Key!));
      token = page.NextContinuationToken;
    } while (token);
    const deleted = await c.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys.map((Key) => ({ Key })) } }));
    const after = await c.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'page/' }));

    expect(Buffer.from(await read.Body!.transformToByteArray()).equals(bytes)).toBe(true);
    expect(keys).toEqual(['page/0', 'page/1', 'page/2', 'page/3', 'page/4']);
    expect(deleted.Deleted).toHaveLength(5);
    expect(after.KeyCount).toBe(0);
    // An IP endpoint makes the SDK address buckets by path, with no forcePathStyle.
    expect(new Set(hosts)).toEqual(new Set(['127.0.0.1']));

    c.destroy();
    await s3.stop();
    expect(existsSync(s3.directory)).toBe(false);
  });

  it('keeps objects in the data dir across a restart', async () => {
    const first = await startS3({ dataDir: dir, bucket: BUCKET });
    await client(first.endpoint).send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kept', Body: 'still here' }));
    await first.stop();

    const second = await startS3({ dataDir: dir, bucket: BUCKET });
    const read = await client(second.endpoint).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'kept' }));

    expect(await read.Body!.transformToString()).toBe('still here');
    await second.stop();
  });

  it('stops, and removes its temporary directory, when the process that started it is killed', async () => {
    const moduleUrl = new URL('../../local/s3.ts', import.meta.url).href;
    const script = `const { startS3 } = await import(${JSON.stringify(moduleUrl)});
      const s3 = await startS3({ dataDir: null, bucket: 'orphan-check' });
      console.log(JSON.stringify(s3));`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = (await once(createInterface({ input: parent.stdout! }), 'line')) as [string];
    const { endpoint, directory } = JSON.parse(line) as { endpoint: string; directory: string };
    expect((await fetch(`${endpoint}/orphan-check`)).status).toBeLessThan(500);

    parent.kill('SIGKILL');

    let answering = true;
    for (let i = 0; i < 50 && answering; i++) {
      await sleep(100);
      answering = await fetch(`${endpoint}/orphan-check`).then(
        () => true,
        () => false,
      );
    }
    expect(answering).toBe(false);
    await sleep(200);
    expect(existsSync(directory)).toBe(false);
  });
});
