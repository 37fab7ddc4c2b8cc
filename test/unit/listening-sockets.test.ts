import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnChild, type ManagedChild } from '#local/child-process';
import { startLocalCloud } from '#local/cloud';
import { listeningSockets } from '#local/listening-sockets';

/** A child process listening on `host`, resolved once it listens. */
async function listener(host: string): Promise<{ child: ManagedChild; port: number }> {
  const script = `const s = require('node:net').createServer().listen(0, ${JSON.stringify(host)}, () => console.log(s.address().port));`;
  const child = spawnChild(process.execPath, ['-e', script]);
  const port = await new Promise<number>((resolve) => child.process.stdout!.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim()))));
  return { child, port };
}

describe('the listening sockets of a process tree, from /proc', { timeout: 60_000 }, () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'listening-sockets-test-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds a descendant listening on every interface, and one on loopback', async () => {
    const open = await listener('0.0.0.0');
    const local = await listener('127.0.0.1');
    try {
      const sockets = listeningSockets();

      expect(sockets).toContainEqual(expect.objectContaining({ pid: open.child.process.pid, address: '0.0.0.0', port: open.port, loopbackOnly: false }));
      expect(sockets).toContainEqual(expect.objectContaining({ pid: local.child.process.pid, address: '127.0.0.1', port: local.port, loopbackOnly: true }));
    } finally {
      await Promise.all([open.child.stop(), local.child.stop()]);
    }
  });

  it('finds nothing of a started local cloud beyond loopback: DynamoDB Local listens in a namespace of its own', async () => {
    const cloud = await startLocalCloud({ port: 0, dataDir: join(dir, 'data') });
    try {
      const sockets = listeningSockets();

      expect(sockets.filter((socket) => !socket.loopbackOnly)).toEqual([]);
      // The jar listens on every interface of its namespace, which has only loopback.
      expect(sockets).toContainEqual(expect.objectContaining({ command: 'java', loopbackOnly: true }));
      expect(sockets.find((socket) => socket.command === 'java')!.address).not.toMatch(/^127\./);
      expect(cloud.warnings).toEqual([]);
    } finally {
      await cloud.stop();
    }
  });
});
