/**
 * `npm run bench`: starts the local cloud in memory and runs every benchmark against it.
 * Figures vary with the machine; compare ratios, not absolute times.
 */
import './quiet';
import { spawnChild, typeScriptEntry } from '#local/child-process';
import { startLocalCloud } from '#local/cloud';
import { benchConsole } from './console';
import { benchDeliveries } from './deliveries';
import { benchFollow } from './follow';
import { benchHarness } from './harness';
import { benchInvocations } from './invocations';
import { benchTraces } from './traces';
import { benchWhoami } from './whoami';
import { benchWorkspace } from './workspace';

const cloud = await startLocalCloud({ port: 0, dataDir: null });
try {
  console.log(`local cloud at ${cloud.baseUrl} (node ${process.version}, ${process.platform}/${process.arch})`);
  await benchWhoami(cloud);
  await benchInvocations(cloud);
  await benchHarness(cloud);
  await benchTraces(cloud);
  await benchWorkspace(cloud);
  await benchFollow(cloud);
  await benchDeliveries(cloud);
  await benchConsole(cloud);
} finally {
  await cloud.stop();
}
// On clouds of their own, each in a process of its own (a process's handler modules keep
// the endpoints of the first cloud they served): the counting proxies would add to the
// latencies above, and the cold pool must be cold.
for (const script of ['requests', 'parallel']) {
  const child = spawnChild(process.execPath, typeScriptEntry(new URL(`./${script}.ts`, import.meta.url)), { stdio: ['ignore', 'inherit', 'inherit'] });
  const { code } = await child.exited;
  if (code !== 0) process.exitCode = 1;
}
