/**
 * The web console in Chromium, on a seeded 500-span trace: the time from navigation to the
 * trace page being interactive (all 500 span rows rendered, their click handlers attached),
 * and the time from clicking a span to its payloads being shown (one request for the span,
 * `GET /traces/{key}/spans/{id}`), for the first, the last and the middle span. Times are taken in the
 * page (`performance.now()` against the navigation's start, mutation observers), so the
 * browser automation's own round trips are not counted. Also the console script's size.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { sha256 } from '#kit/ids';
import type { Invocation } from '#core/model';
import type { LocalCloud } from '#local/cloud';
import { buildConsole } from '../console/build';
import { attemptItem, batchPut, invocationItem, seedSpans, sessionItem } from '../test/seed/traces';
import { figures, type Figures } from './stats';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SPANS = 500;
const PAYLOAD_BYTES = 1024;
const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 10);
const KEY = 'bench-console-trace';

// Page code as text: this file is typed for Node, and tsx's helpers would not survive serialization.

/** Before the page's scripts: records in `__treeReady` the time (since navigation start) at which the span rows are all in the DOM. */
const WATCH_TREE = `(() => {
  const observer = new MutationObserver(() => {
    if (document.querySelectorAll('[data-testid=span-row]').length >= ${SPANS}) {
      window.__treeReady = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { childList: true, subtree: true });
})()`;

/** Resolves with \`__treeReady\` once it is set (polled: the page's CSP allows no string predicates). */
const TREE_READY = `new Promise((resolve) => {
  const check = () => (window.__treeReady !== undefined ? resolve(window.__treeReady) : setTimeout(check, 10));
  check();
})`;

/** Clicks span \`id\`'s row; resolves with the milliseconds until its output's SHA-256 shows. */
const expand = (id: string) => `new Promise((resolve, reject) => {
  const row = document.querySelector('[data-testid=span-row][data-span-id="${id}"]');
  if (!row) return reject(new Error('no row for span ${id}'));
  const shown = () => document.querySelector('[data-testid=span-details][data-span-id="${id}"] [data-testid=payload-output-sha256]');
  const start = performance.now();
  const observer = new MutationObserver(() => {
    if (!shown()) return;
    observer.disconnect();
    resolve(performance.now() - start);
  });
  observer.observe(document, { childList: true, subtree: true, characterData: true });
  row.click();
})`;

async function seed(cloud: LocalCloud): Promise<string> {
  const post = await fetch(`${cloud.baseUrl}/local/sign-in`, { method: 'POST', body: JSON.stringify({ email: 'dev@localhost' }) });
  const { token } = (await post.json()) as { token: string };
  const whoami = await fetch(`${cloud.baseUrl}/whoami`, { headers: { authorization: `Bearer ${token}` } });
  const { organization_id: organizationId } = (await whoami.json()) as { organization_id: string };
  const now = new Date().toISOString();
  const invocation: Invocation = {
    invocation_key: KEY, session_id: 'bench-console-session', session_position: 1, status: 'SUCCEEDED',
    agent_name: 'bench', agent_revision: 'r', body_sha256: sha256('bench-console'), started_at: now, ended_at: now, user_cursor: 1,
  };
  await batchPut([invocationItem(organizationId, invocation), sessionItem(organizationId, invocation.session_id, 1, now), attemptItem(organizationId, invocation, 1)]);
  await seedSpans(organizationId, invocation, { attempt: 1, count: SPANS, payloadBytes: PAYLOAD_BYTES });
  return token;
}

function row(label: string, f: Figures): string {
  return `${label.padEnd(52)} ${f.p50.toFixed(1).padStart(8)} ${f.p99.toFixed(1).padStart(8)}`;
}

/** Runs the benchmark against a started local cloud and prints its figures. */
export async function benchConsole(cloud: LocalCloud): Promise<void> {
  const built = await buildConsole();
  const script = readFileSync(join(built.dir, built.script));
  console.log(`\nWeb console: script ${(script.length / 1024).toFixed(1)} KiB, ${(gzipSync(script, { level: 9 }).length / 1024).toFixed(1)} KiB gzipped`);
  if (!existsSync(CHROMIUM)) {
    console.log(`  no Chromium at ${CHROMIUM} (set CHROMIUM_PATH): the page timings are skipped`);
    return;
  }

  const token = await seed(cloud);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript({ content: `sessionStorage.setItem('agent-sessions.token', ${JSON.stringify(token)});` });
    await context.addInitScript({ content: WATCH_TREE });
    const last = `inv-1.att-1.${SPANS}`;
    const middle = `inv-1.att-1.${SPANS / 2}`;
    const times = { interactive: [] as number[], first: [] as number[], lastWalk: [] as number[], middle: [] as number[] };
    // The first run warms the browser's and the service's caches up.
    for (let run = 0; run <= RUNS; run++) {
      const page = await context.newPage();
      await page.goto(`${cloud.baseUrl}/console/traces/${KEY}`);
      const interactive = await page.evaluate<number>(TREE_READY);
      const first = await page.evaluate<number>(expand('inv-1.att-1.1'));
      const lastWalk = await page.evaluate<number>(expand(last));
      const again = await page.evaluate<number>(expand(middle));
      if (run > 0) {
        times.interactive.push(interactive);
        times.first.push(first);
        times.lastWalk.push(lastWalk);
        times.middle.push(again);
      }
      await page.close();
    }
    console.log(`Trace page of ${SPANS} spans in Chromium, ${RUNS} runs (ms)`);
    console.log(`${'measurement'.padEnd(52)} ${'p50'.padStart(8)} ${'p99'.padStart(8)}`);
    console.log(row('navigation to interactive (500 rows rendered)', figures(times.interactive)));
    console.log(row('expand the first span', figures(times.first)));
    console.log(row(`expand span ${SPANS}`, figures(times.lastWalk)));
    console.log(row(`expand span ${SPANS / 2}`, figures(times.middle)));
  } finally {
    await browser.close();
  }
}
